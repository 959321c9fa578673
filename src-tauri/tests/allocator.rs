//! The allocator setting (src/allocator.rs), in a process of its own: malloc's settings
//! are global, so this file holds one test.
#![cfg(all(target_os = "linux", target_env = "gnu"))]
#![allow(unsafe_code)]

use std::hint::black_box;

const MIB: usize = 1 << 20;

/// (free bytes malloc keeps in its heaps, blocks in mappings of their own)
fn malloc_counters() -> (usize, usize) {
    // SAFETY: mallinfo2 only reads malloc's counters and returns them by value.
    let info = unsafe { libc::mallinfo2() };
    (info.fordblks, info.hblks)
}

#[test]
fn freed_large_blocks_go_back_to_the_system_once_the_thresholds_are_fixed() {
    // What start-up does by default: freeing a big buffer raises glibc's thresholds to its
    // size, so a later 4 MiB block comes from the heap and stays there when freed.
    drop(black_box(vec![1u8; 16 * MIB]));
    drop(black_box(vec![1u8; 4 * MIB]));
    let (kept_by_default, _) = malloc_counters();
    assert!(
        kept_by_default >= 4 * MIB,
        "by default the freed 4 MiB stays in the heap ({kept_by_default} bytes free there)"
    );

    assert!(wyckoff_desk_lib::allocator::return_freed_memory_promptly());
    // The next block still fits in what the heap kept; freeing it now trims the heap.
    drop(black_box(vec![1u8; 4 * MIB]));
    let (kept, mapped) = malloc_counters();
    assert!(
        kept + 3 * MIB <= kept_by_default,
        "the heap gave its free top back ({kept} bytes free, {kept_by_default} before)"
    );
    // And a large block now has a mapping of its own, gone when it is freed.
    let block = black_box(vec![1u8; 4 * MIB]);
    assert_eq!(malloc_counters().1, mapped + 1);
    drop(block);
    assert_eq!(malloc_counters().1, mapped);
}
