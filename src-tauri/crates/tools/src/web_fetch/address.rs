//! The address policy of `web_fetch` (DESIGN: refuses private and loopback addresses
//! unless the settings allow them; cloud metadata addresses always).
//!
//! The check runs on the addresses DNS returned (the fetcher must then connect to the
//! checked address only, so a rebinding answer cannot slip in), and on host literals in
//! every spelling a resolver accepts: dotted, decimal (`2130706433`), hex (`0x7f.1`),
//! octal (`0177.0.0.1`), short forms (`127.1`), IPv6 and IPv4-mapped IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address a fetch would connect to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressKind {
    Public,
    Loopback,
    Private,
    UniqueLocal,
    LinkLocal,
    Cgnat,
    /// Cloud instance metadata (169.254.169.254 and friends): never fetched, whatever the
    /// settings say — no page a user wants lives there, and it is the classic SSRF target.
    Metadata,
    Unspecified,
    Multicast,
    Reserved,
}

impl AddressKind {
    pub fn label(self) -> &'static str {
        match self {
            AddressKind::Public => "public",
            AddressKind::Loopback => "loopback",
            AddressKind::Private => "private",
            AddressKind::UniqueLocal => "private (unique local)",
            AddressKind::LinkLocal => "link-local",
            AddressKind::Cgnat => "CGNAT",
            AddressKind::Metadata => "cloud metadata",
            AddressKind::Unspecified => "unspecified",
            AddressKind::Multicast => "multicast",
            AddressKind::Reserved => "reserved",
        }
    }

    /// Whether a fetch may connect here; `allow_private` is the user's setting.
    pub fn allowed(self, allow_private: bool) -> bool {
        match self {
            AddressKind::Public => true,
            AddressKind::Loopback
            | AddressKind::Private
            | AddressKind::UniqueLocal
            | AddressKind::LinkLocal
            | AddressKind::Cgnat => allow_private,
            AddressKind::Metadata
            | AddressKind::Unspecified
            | AddressKind::Multicast
            | AddressKind::Reserved => false,
        }
    }
}

pub fn classify(ip: IpAddr) -> AddressKind {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify_v4(v4);
            }
            let segments = v6.segments();
            let embedded_v4 = || {
                Ipv4Addr::new(
                    (segments[6] >> 8) as u8,
                    segments[6] as u8,
                    (segments[7] >> 8) as u8,
                    segments[7] as u8,
                )
            };
            if v6.is_loopback() {
                AddressKind::Loopback
            } else if v6.is_unspecified() {
                AddressKind::Unspecified
            } else if v6.is_multicast() {
                AddressKind::Multicast
            } else if v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
                AddressKind::Metadata
            } else if segments[0] & 0xffc0 == 0xfe80 {
                AddressKind::LinkLocal
            } else if segments[0] & 0xfe00 == 0xfc00 {
                AddressKind::UniqueLocal
            } else if (segments[0] == 0x0064 && segments[1] == 0xff9b)
                || segments[..6].iter().all(|s| *s == 0)
            {
                // NAT64 and the deprecated IPv4-compatible ::a.b.c.d embed an IPv4
                // address in the last 32 bits.
                classify_v4(embedded_v4())
            } else {
                AddressKind::Public
            }
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressKind {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        AddressKind::Metadata
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_unspecified() || a == 0 {
        AddressKind::Unspecified
    } else if ip.is_private() {
        AddressKind::Private
    } else if ip.is_link_local() {
        AddressKind::LinkLocal
    } else if a == 100 && (64..128).contains(&b) {
        AddressKind::Cgnat
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if ip.is_broadcast() || a >= 240 {
        AddressKind::Reserved
    } else {
        AddressKind::Public
    }
}

/// A host that is an IP literal in any spelling a resolver accepts, else `None` (a name
/// to resolve).
pub fn parse_host_literal(host: &str) -> Option<IpAddr> {
    let host = host.trim_end_matches('.');
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(v6));
    }
    parse_inet_aton(host).map(IpAddr::V4)
}

/// `inet_aton` rules: 1–4 parts, each decimal, `0x` hex or leading-0 octal; the last part
/// fills the remaining bytes.
fn parse_inet_aton(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let numbers: Vec<u64> = parts.iter().map(|p| parse_part(p)).collect::<Option<_>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|n| *n > 255) {
        return None;
    }
    let last_bits = 8 * (4 - leading.len() as u32);
    if *last >= 1_u64 << last_bits {
        return None;
    }
    let mut value: u64 = 0;
    for n in leading {
        value = (value << 8) | n;
    }
    value = (value << last_bits) | last;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

fn parse_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        return if hex.is_empty() {
            Some(0)
        } else {
            u64::from_str_radix(hex, 16).ok()
        };
    }
    if part.len() > 1 && part.starts_with('0') {
        return u64::from_str_radix(&part[1..], 8).ok();
    }
    if part.bytes().all(|b| b.is_ascii_digit()) {
        return part.parse().ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_spellings_table() {
        let cases = [
            ("127.0.0.1", Some("127.0.0.1")),
            ("2130706433", Some("127.0.0.1")),
            ("0x7f000001", Some("127.0.0.1")),
            ("0x7f.0.0.1", Some("127.0.0.1")),
            ("0177.0.0.1", Some("127.0.0.1")),
            ("127.1", Some("127.0.0.1")),
            ("10.1", Some("10.0.0.1")),
            ("169.254.43518", Some("169.254.169.254")),
            ("0", Some("0.0.0.0")),
            ("[::1]", Some("::1")),
            ("::ffff:127.0.0.1", Some("::ffff:127.0.0.1")),
            ("example.com", None),
            ("1.2.3.4.5", None),
            ("256.1.1.1", None),
            ("08.1.1.1", None),
            ("127.0.0.1.", Some("127.0.0.1")),
        ];
        for (host, want) in cases {
            let got = parse_host_literal(host).map(|ip| ip.to_string());
            assert_eq!(got.as_deref(), want, "{host}");
        }
    }

    fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
        let kind = classify(ip);
        (kind != AddressKind::Public).then(|| kind.label())
    }

    #[test]
    fn allow_private_opens_private_ranges_but_never_metadata_or_reserved() {
        let cases = [
            ("127.0.0.1", true),
            ("10.1.2.3", true),
            ("fd12::1", true),
            ("fe80::1", true),
            ("100.64.0.1", true),
            ("169.254.169.254", false),
            ("fd00:ec2::254", false),
            ("::ffff:169.254.169.254", false),
            ("0.0.0.0", false),
            ("224.0.0.1", false),
            ("255.255.255.255", false),
        ];
        for (ip, with_setting) in cases {
            let kind = classify(ip.parse().unwrap());
            assert!(!kind.allowed(false), "{ip} must be refused by default");
            assert_eq!(kind.allowed(true), with_setting, "{ip} with the setting");
        }
        assert!(classify("1.1.1.1".parse().unwrap()).allowed(false));
    }

    #[test]
    fn forbidden_addresses_table() {
        let cases = [
            ("127.0.0.1", Some("loopback")),
            ("127.255.1.2", Some("loopback")),
            ("10.0.0.8", Some("private")),
            ("172.16.5.4", Some("private")),
            ("172.32.0.1", None),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("cloud metadata")),
            ("100.100.100.200", Some("cloud metadata")),
            ("169.254.1.1", Some("link-local")),
            ("100.64.0.1", Some("CGNAT")),
            ("100.127.255.255", Some("CGNAT")),
            ("100.128.0.1", None),
            ("224.0.0.1", Some("multicast")),
            ("0.0.0.0", Some("unspecified")),
            ("0.1.2.3", Some("unspecified")),
            ("255.255.255.255", Some("reserved")),
            ("8.8.8.8", None),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("fe80::1", Some("link-local")),
            ("fd00::1", Some("private (unique local)")),
            ("ff02::1", Some("multicast")),
            ("::ffff:127.0.0.1", Some("loopback")),
            ("::ffff:10.0.0.1", Some("private")),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some("loopback")),
            ("64:ff9b::a9fe:a9fe", Some("cloud metadata")),
            ("2001:4860:4860::8888", None),
        ];
        for (ip, want) in cases {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(forbidden_reason(ip), want, "{ip}");
        }
    }

    #[test]
    fn every_spelling_of_loopback_is_refused() {
        for host in [
            "2130706433",
            "0x7f.1",
            "0177.0.0.01",
            "127.1",
            "[::ffff:7f00:1]",
        ] {
            let ip = parse_host_literal(host).unwrap();
            assert_eq!(forbidden_reason(ip), Some("loopback"), "{host}");
        }
    }
}
