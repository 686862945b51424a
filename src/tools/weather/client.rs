//! The HTTP side of `weather_lookup`: one GET to wttr.in, bounded in time and size, refusing
//! redirects and any address that is not on the public internet.

use std::fmt;
use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

pub const DEFAULT_BASE_URL: &str = "https://wttr.in";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a name lookup may take. A machine without a network can hang in the resolver for
/// far longer than the request timeout, which does not cover the lookup.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);
pub const MAX_BODY_BYTES: usize = 400_000;
pub const USER_AGENT: &str = concat!("skilleval/", env!("CARGO_PKG_VERSION"));

/// What the service sent back, unchanged, so a recorder can store it and a replay can render it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub status: u16,
    pub body: String,
}

/// Why no answer could be had. The text reads as the tail of "could not be reached: …".
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("it did not answer within {}", format_duration(*.0))]
    TimedOut(Duration),
    #[error("its answer was larger than the {limit}-byte limit")]
    TooLarge { limit: usize },
    #[error("it answered with a redirect (HTTP {status}{}), which is not followed", redirect_target(.location))]
    Redirected {
        status: u16,
        location: Option<String>,
    },
    #[error("{0}")]
    Blocked(BlockedAddress),
    #[error("{0}")]
    Transport(String),
}

/// The resolver found a private or local address for the host and refused to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedAddress {
    pub host: String,
    pub address: IpAddr,
}

impl fmt::Display for BlockedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolved to {}, which is not a public address, so it was not contacted",
            self.host, self.address
        )
    }
}

impl std::error::Error for BlockedAddress {}

fn format_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

fn redirect_target(location: &Option<String>) -> String {
    location
        .as_deref()
        .map(|target| format!(" to {target}"))
        .unwrap_or_default()
}

/// A client for wttr.in. The default is the production one: HTTPS, public addresses only.
#[derive(Debug, Clone)]
pub struct WeatherService {
    base_url: String,
    timeout: Duration,
    allow_loopback: bool,
}

impl Default for WeatherService {
    fn default() -> Self {
        Self::new()
    }
}

impl WeatherService {
    pub fn new() -> Self {
        WeatherService {
            base_url: DEFAULT_BASE_URL.to_string(),
            timeout: DEFAULT_TIMEOUT,
            allow_loopback: false,
        }
    }

    /// Points the client at another server (a test stand-in). Private addresses stay refused.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into().trim_end_matches('/').to_string();
        self
    }

    /// Lets the client connect to loopback addresses, and only those, for a local stand-in server.
    pub fn allow_loopback(mut self) -> Self {
        self.allow_loopback = true;
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn url_for(&self, location: &str) -> String {
        format!("{}/{}?format=j1", self.base_url, percent_encode(location))
    }

    /// One GET for the location's `j1` answer. Any status that is not a redirect comes back as
    /// `Fetched`; judging it is `render_result`'s job.
    pub fn fetch(&self, location: &str) -> Result<Fetched, FetchError> {
        let allow_loopback = self.allow_loopback;
        let timeout = self.timeout;
        let agent = ureq::AgentBuilder::new()
            .timeout(self.timeout)
            .redirects(0)
            .user_agent(USER_AGENT)
            .resolver(move |netloc: &str| {
                resolve_within(netloc, RESOLVE_TIMEOUT.min(timeout), allow_loopback)
            })
            .build();
        let response = match agent
            .get(&self.url_for(location))
            .set("Accept", "application/json")
            .call()
        {
            Ok(response) => response,
            Err(ureq::Error::Status(_, response)) => response,
            Err(ureq::Error::Transport(transport)) => {
                return Err(self.classify_transport(transport))
            }
        };
        let status = response.status();
        if (300..400).contains(&status) {
            return Err(FetchError::Redirected {
                status,
                location: response.header("Location").map(str::to_string),
            });
        }
        let declared_length = response
            .header("Content-Length")
            .and_then(|value| value.trim().parse::<usize>().ok());
        if declared_length.is_some_and(|length| length > MAX_BODY_BYTES) {
            return Err(FetchError::TooLarge {
                limit: MAX_BODY_BYTES,
            });
        }
        let body = self.read_capped(response.into_reader())?;
        Ok(Fetched { status, body })
    }

    fn read_capped(&self, reader: impl Read) -> Result<String, FetchError> {
        let mut bytes = Vec::new();
        // One byte past the cap is enough to know the body is over it.
        reader
            .take(MAX_BODY_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|err| self.classify_io(&err))?;
        if bytes.len() > MAX_BODY_BYTES {
            return Err(FetchError::TooLarge {
                limit: MAX_BODY_BYTES,
            });
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn classify_transport(&self, transport: ureq::Transport) -> FetchError {
        let mut source: Option<&(dyn std::error::Error + 'static)> =
            std::error::Error::source(&transport);
        while let Some(err) = source {
            if let Some(io_err) = err.downcast_ref::<io::Error>() {
                if let Some(blocked) = io_err
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<BlockedAddress>())
                {
                    return FetchError::Blocked(blocked.clone());
                }
                if is_timeout(io_err) {
                    return FetchError::TimedOut(self.timeout);
                }
            }
            source = err.source();
        }
        FetchError::Transport(transport.to_string())
    }

    fn classify_io(&self, err: &io::Error) -> FetchError {
        if is_timeout(err) {
            FetchError::TimedOut(self.timeout)
        } else {
            FetchError::Transport(err.to_string())
        }
    }
}

fn is_timeout(err: &io::Error) -> bool {
    // A socket read timeout surfaces as WouldBlock on Unix and TimedOut elsewhere.
    matches!(
        err.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// [`resolve_public`] on its own thread, given up after `limit`: the system resolver cannot be
/// interrupted, so a lookup that hangs is left to finish on its own.
pub fn resolve_within(
    netloc: &str,
    limit: Duration,
    allow_loopback: bool,
) -> io::Result<Vec<SocketAddr>> {
    let (send, receive) = std::sync::mpsc::channel();
    let owned = netloc.to_string();
    std::thread::spawn(move || {
        let _ = send.send(resolve_public(&owned, allow_loopback));
    });
    receive.recv_timeout(limit).unwrap_or_else(|_| {
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "looking up {netloc} took longer than {} (no network?)",
                format_duration(limit)
            ),
        ))
    })
}

/// Resolves `host:port` and refuses the answer if any address is not public (loopback aside, when
/// allowed); the error wraps a `BlockedAddress`. ureq calls this for every connection, so the
/// check covers the addresses actually dialled, not a separate lookup DNS could answer differently.
pub fn resolve_public(netloc: &str, allow_loopback: bool) -> io::Result<Vec<SocketAddr>> {
    let addresses: Vec<SocketAddr> = netloc.to_socket_addrs()?.collect();
    let host = netloc
        .rsplit_once(':')
        .map_or(netloc, |(host, _port)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    // One bad address refuses the whole answer: a mixed answer is what a rebinding attack looks like.
    if let Some(bad) = addresses
        .iter()
        .map(SocketAddr::ip)
        .find(|ip| !(is_public_address(*ip) || allow_loopback && ip.is_loopback()))
    {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            BlockedAddress {
                host: host.to_string(),
                address: bad,
            },
        ));
    }
    Ok(addresses)
}

/// True for addresses on the public internet; false for private, loopback, link-local,
/// unspecified, carrier-grade NAT, unique-local, multicast and reserved ones.
pub fn is_public_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    let carrier_grade_nat = a == 100 && (64..128).contains(&b);
    let this_network = a == 0;
    let reserved = a >= 240;
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || carrier_grade_nat
        || this_network
        || reserved)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let first = ip.segments()[0];
    let unique_local = first & 0xfe00 == 0xfc00;
    let link_local = first & 0xffc0 == 0xfe80;
    !(ip.is_loopback() || ip.is_unspecified() || ip.is_multicast() || unique_local || link_local)
}

/// Encodes everything but RFC 3986's unreserved characters, so a location can never add path
/// segments or a query of its own.
pub fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}
