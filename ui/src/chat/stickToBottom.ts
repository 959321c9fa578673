import { type RefObject, useEffect, useRef } from "react";

/** How close to the end (px) still counts as "reading the latest". */
const NEAR_BOTTOM_PX = 80;

export function isNearBottom(scrollTop: number, clientHeight: number, scrollHeight: number): boolean {
  return scrollHeight - (scrollTop + clientHeight) <= NEAR_BOTTOM_PX;
}

/**
 * Keeps a scrolling container at its end while new content arrives, unless the user
 * scrolled up to read earlier messages (then it stays where they are). `changes` are
 * values whose identity changes when the content grows (always the same count).
 */
export function useStickToBottom(ref: RefObject<HTMLElement | null>, ...changes: unknown[]) {
  const stuck = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onScroll = () => {
      stuck.current = isNearBottom(el.scrollTop, el.clientHeight, el.scrollHeight);
    };
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, [ref]);
  useEffect(() => {
    const el = ref.current;
    if (el && stuck.current) el.scrollTop = el.scrollHeight;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the content is the trigger
  }, [ref, ...changes]);
}
