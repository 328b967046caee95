//! The HTTP side of the metrics endpoint: a minimal HTTP/1.1 server that
//! answers `GET /metrics` (and `HEAD`), one request per connection.
//!
//! It runs on the control thread's tokio runtime, next to the controller
//! connections, so nothing a client does may hold it up or grow without
//! bound:
//! - at most [`MAX_CONNECTIONS`] connections at once; a connection beyond
//!   that is closed at once, unanswered;
//! - the request head (request line and headers) must arrive within
//!   [`REQUEST_TIMEOUT`] and fit in [`MAX_REQUEST`] bytes (else 408 or
//!   431), and the answer must be taken within [`WRITE_TIMEOUT`];
//! - a request body, keep-alive and pipelining are ignored: the answer
//!   says `Connection: close` and the connection is closed after it;
//! - before closing, what the client still sends is read and discarded,
//!   for at most [`LINGER`] and [`LINGER_BYTES`] (a close with unread
//!   bytes would reset the connection, and the client could lose the
//!   answer, e.g. a 431 to an oversized request).
//!
//! The request head is parsed with `httparse` (the parser hyper uses).
//! Answers: 200 with the exposition for `GET`/`HEAD /metrics` (a query
//! string is ignored), 404 for any other path, 405 for other methods, 400
//! for anything that is not an HTTP/1.x request, 500 if the numbers could
//! not be read.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::timeout;

use super::exposition::CONTENT_TYPE;

/// Largest request head accepted, in bytes.
pub const MAX_REQUEST: usize = 8192;
/// Most connections served at once.
pub const MAX_CONNECTIONS: usize = 16;
/// Time a client has to send its request head.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a client has to take the answer.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the client to close after the answer.
pub const LINGER: Duration = Duration::from_secs(1);
/// Most bytes read and discarded after the answer.
pub const LINGER_BYTES: usize = 64 * 1024;
/// Headers parsed per request (more is a 431).
const MAX_HEADERS: usize = 64;

/// The path served.
pub const PATH: &str = "/metrics";

/// Accepts connections on `listener` for ever, answering each with
/// [`handle`]; `render` produces the exposition (`None`: 500).
pub async fn serve<F, Fut>(listener: TcpListener, render: F)
where
    F: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Option<String>> + Send,
{
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of descriptors and the like: wait a little rather
                // than spin on the error.
                tracing::debug!("metrics: accept: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            tracing::debug!("metrics: {MAX_CONNECTIONS} connections open, one refused");
            continue;
        };
        let render = render.clone();
        tokio::spawn(async move {
            if let Err(e) = handle(stream, &render).await {
                tracing::debug!("metrics: connection: {e}");
            }
            drop(slot);
        });
    }
}

/// What the request head asked for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// GET (`head`: HEAD) of `path`.
    Get { path: String, head: bool },
    /// Another method.
    Method,
    /// Not an HTTP/1.x request head.
    Bad,
    /// Head larger than [`MAX_REQUEST`] or with too many headers.
    TooLarge,
    /// The client closed before sending a whole head.
    Closed,
}

/// Reads and parses one request head.
async fn read_request<S: AsyncRead + Unpin>(stream: &mut S) -> std::io::Result<Request> {
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut len = 0;
    loop {
        let Some(free) = buf.get_mut(len..) else {
            return Ok(Request::TooLarge);
        };
        if free.is_empty() {
            return Ok(Request::TooLarge);
        }
        let n = stream.read(free).await?;
        if n == 0 {
            return Ok(Request::Closed);
        }
        len += n;
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(buf.get(..len).unwrap_or_default()) {
            Ok(httparse::Status::Complete(_)) => {
                let path = req.path.unwrap_or_default();
                let path = path.split('?').next().unwrap_or_default().to_string();
                return Ok(match req.method {
                    Some("GET") => Request::Get { path, head: false },
                    Some("HEAD") => Request::Get { path, head: true },
                    _ => Request::Method,
                });
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => return Ok(Request::TooLarge),
            Err(_) => return Ok(Request::Bad),
        }
    }
}

/// An answer: status, extra header lines, body.
struct Response {
    status: u16,
    reason: &'static str,
    content_type: &'static str,
    extra: &'static str,
    body: String,
    /// HEAD: headers only (Content-Length still that of the body).
    head: bool,
}

impl Response {
    fn error(status: u16, reason: &'static str) -> Response {
        Response {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            extra: "",
            body: format!("{status} {reason}\n"),
            head: false,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.body.len(),
            self.extra
        )
        .into_bytes();
        if !self.head {
            out.extend_from_slice(self.body.as_bytes());
        }
        out
    }
}

/// Serves one connection: reads one request head, writes the answer,
/// closes (module comment).
pub async fn handle<S, F, Fut>(mut stream: S, render: &F) -> std::io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: Fn() -> Fut,
    Fut: Future<Output = Option<String>>,
{
    let request = match timeout(REQUEST_TIMEOUT, read_request(&mut stream)).await {
        Ok(r) => r?,
        Err(_) => {
            let r = Response::error(408, "Request Timeout");
            let _ = timeout(WRITE_TIMEOUT, stream.write_all(&r.bytes())).await;
            return Ok(());
        }
    };
    let response = match request {
        Request::Closed => return Ok(()),
        Request::Bad => Response::error(400, "Bad Request"),
        Request::TooLarge => Response::error(431, "Request Header Fields Too Large"),
        Request::Method => Response {
            extra: "Allow: GET, HEAD\r\n",
            ..Response::error(405, "Method Not Allowed")
        },
        Request::Get { path, .. } if path != PATH => Response::error(404, "Not Found"),
        Request::Get { head, .. } => match render().await {
            Some(body) => Response {
                status: 200,
                reason: "OK",
                content_type: CONTENT_TYPE,
                extra: "",
                body,
                head,
            },
            None => Response::error(500, "Internal Server Error"),
        },
    };
    timeout(WRITE_TIMEOUT, async {
        stream.write_all(&response.bytes()).await?;
        stream.shutdown().await
    })
    .await
    .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "client too slow"))??;
    linger(&mut stream).await;
    Ok(())
}

/// Reads and discards until the client closes, within [`LINGER`] and
/// [`LINGER_BYTES`] (module comment).
async fn linger<S: AsyncRead + Unpin>(stream: &mut S) {
    let _ = timeout(LINGER, async {
        let mut sink = [0u8; 4096];
        let mut total = 0;
        while total < LINGER_BYTES {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` through [`handle`] and returns the whole answer.
    async fn ask(request: &[u8]) -> String {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let render = || async { Some("m 1\n".to_string()) };
        let task = tokio::spawn(async move { handle(server, &render).await });
        client.write_all(request).await.unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        drop(client);
        task.await.unwrap().unwrap();
        out
    }

    fn status(answer: &str) -> &str {
        answer.lines().next().unwrap()
    }

    #[tokio::test]
    async fn get_metrics_answers_the_exposition() {
        let a = ask(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 200 OK");
        assert!(
            a.contains(&format!("Content-Type: {CONTENT_TYPE}\r\n")),
            "{a}"
        );
        assert!(a.contains("Content-Length: 4\r\n"), "{a}");
        assert!(a.contains("Connection: close\r\n"), "{a}");
        assert!(a.ends_with("\r\n\r\nm 1\n"), "{a}");
        // A query string is ignored; HTTP/1.0 is fine.
        let a = ask(b"GET /metrics?x=1 HTTP/1.0\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 200 OK");
    }

    #[tokio::test]
    async fn head_has_the_headers_only() {
        let a = ask(b"HEAD /metrics HTTP/1.1\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 200 OK");
        assert!(a.contains("Content-Length: 4\r\n"), "{a}");
        assert!(a.ends_with("\r\n\r\n"), "{a}");
    }

    #[tokio::test]
    async fn other_paths_methods_and_garbage_are_refused() {
        let a = ask(b"GET / HTTP/1.1\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 404 Not Found");
        let a = ask(b"GET /metricsx HTTP/1.1\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 404 Not Found");
        let a = ask(b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 405 Method Not Allowed");
        assert!(a.contains("Allow: GET, HEAD\r\n"), "{a}");
        let a = ask(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 400 Bad Request");
        let a = ask(b"GET /metrics SPDY/3\r\n\r\n").await;
        assert_eq!(status(&a), "HTTP/1.1 400 Bad Request");
    }

    #[tokio::test]
    async fn oversized_heads_are_refused() {
        let mut big = b"GET /metrics HTTP/1.1\r\nX-Filler: ".to_vec();
        big.resize(MAX_REQUEST + 100, b'a');
        big.extend_from_slice(b"\r\n\r\n");
        let (mut client, server) = tokio::io::duplex(4 * MAX_REQUEST);
        let render = || async { Some(String::new()) };
        let task = tokio::spawn(async move { handle(server, &render).await });
        client.write_all(&big).await.unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        drop(client);
        task.await.unwrap().unwrap();
        assert_eq!(status(&out), "HTTP/1.1 431 Request Header Fields Too Large");
        let mut many = b"GET /metrics HTTP/1.1\r\n".to_vec();
        for i in 0..(MAX_HEADERS + 1) {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        let a = ask(&many).await;
        assert_eq!(status(&a), "HTTP/1.1 431 Request Header Fields Too Large");
    }

    #[tokio::test]
    async fn a_failed_read_is_a_500_and_a_silent_client_times_out() {
        let (mut client, server) = tokio::io::duplex(1024);
        let render = || async { None };
        let task = tokio::spawn(async move { handle(server, &render).await });
        client
            .write_all(b"GET /metrics HTTP/1.1\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        drop(client);
        task.await.unwrap().unwrap();
        assert_eq!(status(&out), "HTTP/1.1 500 Internal Server Error");

        // A client that sends half a head and then nothing gets 408 once
        // the (paused, so instant) clock passes the timeout.
        tokio::time::pause();
        let (mut client, server) = tokio::io::duplex(1024);
        let render = || async { Some(String::new()) };
        let task = tokio::spawn(async move { handle(server, &render).await });
        client.write_all(b"GET /metr").await.unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        drop(client);
        task.await.unwrap().unwrap();
        assert_eq!(status(&out), "HTTP/1.1 408 Request Timeout");
    }

    #[tokio::test]
    async fn a_client_that_closes_early_gets_nothing() {
        let (mut client, server) = tokio::io::duplex(1024);
        let render = || async { Some(String::new()) };
        let task = tokio::spawn(async move { handle(server, &render).await });
        client.write_all(b"GET /metrics HTT").await.unwrap();
        client.shutdown().await.unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        drop(client);
        task.await.unwrap().unwrap();
        assert_eq!(out, "");
    }
}
