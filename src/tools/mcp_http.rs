//! An MCP server reached by streamable HTTP, through `rmcp`'s own client transport: its URL as
//! a pack or `init --mcp` writes it, checked before anything is asked, and the session opened
//! with it. The server is not skilleval's to start or stop.

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};

/// Whether a word names a server by URL rather than a program: it has a scheme. A misspelt
/// scheme is then refused by [`check_url`] rather than started as a program.
pub fn looks_like_url(word: &str) -> bool {
    word.contains("://")
}

/// The URL `--mcp` gives, when its one word is written as one.
pub fn url_in(words: &[String]) -> Option<&str> {
    match words {
        [word] if looks_like_url(word) => Some(word),
        _ => None,
    }
}

/// Why `text` is no URL an MCP client can reach, if it is not: an `http://` or `https://`
/// URL with a host, as the HTTP client will read it.
pub fn check_url(text: &str) -> Result<(), String> {
    if text.trim() != text || text.is_empty() {
        return Err(format!(
            "{text:?} is not a URL: no spaces around it, and not empty"
        ));
    }
    let url = url::Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{text:?}: a streamable-HTTP MCP server's URL starts with http:// or https://, not {}://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{text:?} names no host"));
    }
    if url.fragment().is_some() {
        return Err(format!(
            "{text:?}: a fragment (`#…`) is never sent to a server; drop it"
        ));
    }
    Ok(())
}

/// Opens the session with the server at `url` (checked with [`check_url`]); run on the runtime
/// that is to carry the transport's worker.
pub(super) async fn serve(
    url: &str,
) -> Result<RunningService<RoleClient, ()>, rmcp::service::ClientInitializeError> {
    // The TLS of an https server: ring's, once per process (a second install is refused,
    // harmlessly). rustls then checks the server's certificate against the system's roots.
    let _ = rustls::crypto::ring::default_provider().install_default();
    ().serve(StreamableHttpClientTransport::from_uri(url)).await
}

/// Why a session with `url` could not be opened, from the SDK's words `error`: that nothing
/// listens there when so (the SDK says only that the request could not be sent), else the
/// SDK's words made plain.
pub(super) fn why_not(url: &str, error: &str) -> String {
    unreachable(url).unwrap_or_else(|| {
        format!(
            "{}; is this the URL of a streamable-HTTP MCP server?",
            plain_words(error)
        )
    })
}

/// Why nothing can be asked at `url`'s host and port, if so: the SDK's error says only that
/// the request could not be sent, not that nothing listens there or the host is unknown.
fn unreachable(url: &str) -> Option<String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let port = parsed.port_or_known_default()?;
    let address = match (host, port).to_socket_addrs() {
        Ok(mut found) => found.next()?,
        Err(e) => return Some(format!("cannot find host {host}: {e}")),
    };
    TcpStream::connect_timeout(&address, std::time::Duration::from_secs(5))
        .err()
        .map(|e| format!("nothing answers at {host}:{port}: {e}"))
}

/// The SDK's words for a failed initialize without the transport's type name, and a page the
/// server sent cut to its start, in one line.
fn plain_words(error: &str) -> String {
    let text = match error.find("] error: ") {
        Some(at) => {
            let head = error[..at].split(" Transport [").next().unwrap_or_default();
            format!("{head}: {}", &error[at + "] error: ".len()..])
        }
        None => error.to_string(),
    };
    let text = text.trim_end_matches(", when send initialize request");
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut line = words.join(" ");
    if line.chars().count() > 300 {
        line = line.chars().take(300).collect::<String>() + "…";
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The URLs a pack or `--mcp` may give, and the ones refused with a reason (truth: a
    /// change; the rules are the HTTP client's, as the `url` crate parses).
    #[test]
    fn urls_an_mcp_client_can_reach_and_the_ones_refused() {
        for good in [
            "http://127.0.0.1:3001/mcp",
            "https://mcp.example.com/mcp",
            "http://localhost:8000/",
            "http://[::1]:9000/mcp?key=v",
        ] {
            assert_eq!(check_url(good), Ok(()), "{good}");
        }
        for (bad, words) in [
            ("ftp://host/mcp", "http:// or https://"),
            ("http://", "not a URL"),
            ("http//127.0.0.1:3001/mcp", "not a URL"),
            ("http://127.0.0.1:99999/mcp", "not a URL"),
            (" http://127.0.0.1/mcp", "no spaces"),
            ("http://127.0.0.1/mcp#top", "fragment"),
        ] {
            let error = check_url(bad).expect_err(bad);
            assert!(error.contains(words), "{bad}: {error}");
        }
    }

    /// A word with a scheme is taken for a URL, so that a misspelt scheme is refused rather
    /// than started as a program; a command line is not (truth: a change).
    /// The SDK's message for a server answering 404, as it reads in rmcp 3.11, in plain words
    /// (truth: a change).
    #[test]
    fn a_failed_initialize_reads_without_the_transport_type() {
        let sdk = "initialize failed: Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::async_impl::client::Client>>] error: unexpected server response: HTTP 404 Not Found: <!DOCTYPE html>\n<html>\n<pre>Cannot POST /nope</pre>, when send initialize request";
        assert_eq!(
            plain_words(sdk),
            "initialize failed: Send message error: unexpected server response: HTTP 404 Not Found: <!DOCTYPE html> <html> <pre>Cannot POST /nope</pre>"
        );
        assert_eq!(
            plain_words("no answer to initialize within 2s"),
            "no answer to initialize within 2s"
        );
    }

    /// A port nothing listens on is said to be so, by the system's own words (truth: the
    /// operating system's refusal of a connection to a port just closed).
    #[test]
    fn a_port_nothing_listens_on_is_named() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let why = unreachable(&format!("http://127.0.0.1:{port}/mcp")).expect("refused");
        assert!(
            why.starts_with(&format!("nothing answers at 127.0.0.1:{port}: ")),
            "{why}"
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap().port();
        assert_eq!(unreachable(&format!("http://127.0.0.1:{open}/mcp")), None);
    }

    #[test]
    fn a_word_with_a_scheme_is_a_url_and_a_program_is_not() {
        assert!(looks_like_url("http://127.0.0.1:3001/mcp"));
        assert!(looks_like_url("htp://127.0.0.1:3001/mcp"));
        assert!(!looks_like_url("npx"));
        assert!(!looks_like_url("./server.py"));
    }
}
