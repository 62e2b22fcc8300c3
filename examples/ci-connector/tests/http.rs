//! The HTTP adapter against a real local server (tiny_http on 127.0.0.1:0).

use crate::{corpus, request, AuditLog, CANARY};
use airlock_guard::{Admission, ErrorCode, Stage};
use ci_connector::CiConnector;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const MAX_BYTES: u64 = 65536; // schemas/ci_pipeline_status: [limits] max_bytes

/// A server answering every request with `respond`; counts the requests.
struct Server {
    url: String,
    hits: Arc<AtomicUsize>,
}

impl Server {
    fn start(respond: impl Fn(tiny_http::Request) + Send + 'static) -> Server {
        let server = tiny_http::Server::http("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                counted.fetch_add(1, Ordering::SeqCst);
                respond(request);
            }
        });
        Server {
            url: format!("http://127.0.0.1:{port}/api/v4"),
            hits,
        }
    }

    /// Every request answered with this status, content type and body.
    fn fixed(status: u16, content_type: &'static str, body: Vec<u8>) -> Server {
        Server::start(move |request| {
            let response = tiny_http::Response::from_data(body.clone())
                .with_status_code(status)
                .with_header(header("Content-Type", content_type));
            let _ = request.respond(response);
        })
    }

    fn connector(&self) -> (CiConnector, AuditLog) {
        let audit = AuditLog::default();
        let connector = CiConnector::new(&self.url, crate::contract("ci_pipeline_status"))
            .expect("the shipped contract loads")
            .audit_to(audit.clone())
            .timeout(Duration::from_millis(500));
        (connector, audit)
    }

    fn fetch(&self) -> (Admission, AuditLog) {
        let (connector, audit) = self.connector();
        let admission = connector
            .fetch(&request("ci_pipeline_status"))
            .expect("answered");
        (admission, audit)
    }
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name, value).expect("a header")
}

fn json(body: &[u8]) -> Server {
    Server::fixed(200, "application/json", body.to_vec())
}

fn code(admission: &Admission) -> Option<(ErrorCode, bool)> {
    admission.agent().error()
}

fn agent_text(admission: &Admission) -> String {
    admission.agent().to_json_string()
}

#[test]
fn accepted_pipeline_is_mapped_and_asked_for_at_the_pipeline_url() {
    let (sender, paths) = mpsc::channel();
    let body = corpus("ci_pipeline_status/accepted/running_compact.json");
    let server = Server::start(move |request| {
        let _ = sender.send(request.url().to_owned());
        let response = tiny_http::Response::from_data(body.clone())
            .with_header(header("Content-Type", "application/json; charset=utf-8"));
        let _ = request.respond(response);
    });
    let (admission, audit) = server.fetch();
    assert!(admission.is_admitted(), "{:?}", admission.diagnostic());
    assert_eq!(
        admission.agent().to_json(),
        serde_json::json!({
            "tool": "ci_pipeline_status",
            "request_id": "req.CiPipe0046",
            "outcome": "success",
            "data": {
                "pipeline_id": 46,
                "state": "running",
                "ref": "main",
                "sha": "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
                "observed_at": "2026-12-03T07:32:35.169Z"
            }
        })
    );
    assert_eq!(paths.recv().unwrap(), "/api/v4/projects/7/pipelines/46");
    let records = audit.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["verdict"], "admitted");
    assert_eq!(records[0]["attempt"], 1);
    assert!(records[0]["raw_sha256"].is_string(), "{}", records[0]);
    assert_eq!(records[0]["adapter"]["name"], "ci-connector");
    assert_eq!(records[0]["endpoint"], server.url);
}

#[test]
fn a_vendor_extra_carrying_a_canary_never_reaches_the_agent() {
    let mut document: serde_json::Value =
        serde_json::from_slice(&corpus("ci_pipeline_status/accepted/running_compact.json"))
            .unwrap();
    document["note_for_the_assistant"] = CANARY.into();
    document["user"]["name"] = CANARY.into();
    document["detailed_status"]["tooltip"] = CANARY.into();
    let server = json(&serde_json::to_vec(&document).unwrap());
    let (admission, audit) = server.fetch();
    assert!(admission.is_admitted(), "{:?}", admission.diagnostic());
    assert!(!agent_text(&admission).contains("CANARY"));
    assert!(!audit
        .records()
        .iter()
        .any(|r| r.to_string().contains("CANARY")));
}

#[test]
fn a_vendor_field_renamed_upstream_fails_closed_naming_the_pointer() {
    let server = json(&corpus(
        "ci_pipeline_status/near_miss/sha_renamed_upstream_to_commit_sha.json",
    ));
    let (admission, audit) = server.fetch();
    assert_eq!(code(&admission), Some((ErrorCode::InvalidResponse, false)));
    let diagnostic = admission
        .diagnostic()
        .expect("a rejection has a diagnostic");
    assert_eq!(diagnostic.stage(), Stage::Decode);
    assert!(diagnostic.message().contains("/sha"), "{diagnostic}");
    // Not retried: a rejection is final.
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    assert_eq!(audit.records()[0]["stage"], "decode");
}

#[test]
fn a_status_outside_the_table_is_the_fixed_failure() {
    let server = json(&corpus(
        "ci_pipeline_status/near_miss/status_outside_the_table.json",
    ));
    let (admission, _) = server.fetch();
    assert_eq!(code(&admission), Some((ErrorCode::InvalidResponse, false)));
}

#[test]
fn a_404_with_gitlab_message_is_judged_by_the_failure_rules() {
    let server = Server::fixed(
        404,
        "application/json",
        br#"{"message":"404 Not Found"}"#.to_vec(),
    );
    let (admission, audit) = server.fetch();
    assert!(admission.is_admitted(), "{:?}", admission.diagnostic());
    assert_eq!(code(&admission), Some((ErrorCode::NotFound, false)));
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    assert_eq!(audit.records().len(), 1);
}

#[test]
fn a_503_message_is_unavailable_and_retried_per_the_policy() {
    let server = Server::fixed(
        503,
        "application/json",
        format!(r#"{{"message":"503 Service Unavailable {CANARY}"}}"#).into_bytes(),
    );
    let (admission, audit) = server.fetch();
    assert_eq!(
        code(&admission),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    assert!(!agent_text(&admission).contains("CANARY"));
    // max_attempts = 3 in the contract: three GETs, three audit records.
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);
    let attempts: Vec<_> = audit
        .records()
        .iter()
        .map(|r| r["attempt"].clone())
        .collect();
    assert_eq!(attempts, [1, 2, 3]);
}

#[test]
fn an_error_status_carrying_a_pipeline_is_not_believed() {
    let server = Server::fixed(
        503,
        "application/json",
        corpus("ci_pipeline_status/accepted/running_compact.json"),
    );
    let (admission, audit) = server.fetch();
    assert_eq!(
        code(&admission),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    assert_eq!(audit.records()[0]["stage"], "transport");
}

#[test]
fn a_wrong_content_type_is_not_read() {
    // A proxy's HTML page, and the right JSON under the wrong type: neither is the API.
    let html = format!("<html><body>502 Bad Gateway {CANARY}</body></html>").into_bytes();
    for (content_type, body) in [
        ("text/html", html),
        (
            "text/plain",
            corpus("ci_pipeline_status/accepted/running_compact.json"),
        ),
    ] {
        let server = Server::fixed(200, content_type, body);
        let (admission, audit) = server.fetch();
        assert_eq!(
            code(&admission),
            Some((ErrorCode::UpstreamUnavailable, true)),
            "{content_type}"
        );
        assert!(!agent_text(&admission).contains("CANARY"));
        let records = audit.records();
        assert_eq!(records[0]["stage"], "transport", "{content_type}");
        assert!(records[0]["raw_sha256"].is_null(), "the body was not read");
    }
}

#[test]
fn a_slow_body_times_out_per_attempt() {
    let body = corpus("ci_pipeline_status/accepted/running_compact.json");
    let server = Server::start(move |request| {
        // Headers and the first bytes at once, the rest after 2 s: past the 500 ms timeout.
        let slow = Slow {
            head: body[..10].to_vec(),
            tail: body[10..].to_vec(),
            sent_head: false,
        };
        let response = tiny_http::Response::new(
            200.into(),
            vec![header("Content-Type", "application/json")],
            slow,
            Some(body.len()),
            None,
        );
        let _ = request.respond(response);
    });
    let started = Instant::now();
    let (admission, audit) = server.fetch();
    let elapsed = started.elapsed();
    assert_eq!(
        code(&admission),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    let records = audit.records();
    assert_eq!(records.len(), 3);
    assert!(
        records
            .iter()
            .all(|r| r["diagnostic"]["keyword"] == "timeout"),
        "{records:?}"
    );
    // Three attempts of 500 ms each, not three of 2 s.
    assert!(elapsed < Duration::from_millis(2500), "{elapsed:?}");
}

struct Slow {
    head: Vec<u8>,
    tail: Vec<u8>,
    sent_head: bool,
}

impl Read for Slow {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.sent_head {
            self.sent_head = true;
            let n = self.head.len().min(buf.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            return Ok(n);
        }
        std::thread::sleep(Duration::from_secs(2));
        let n = self.tail.len().min(buf.len());
        buf[..n].copy_from_slice(&self.tail[..n]);
        self.tail.drain(..n);
        Ok(n)
    }
}

/// An endless body that counts what the server handed to the connection.
struct Endless {
    served: Arc<AtomicU64>,
}

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // A JSON string that never ends: `{"id":46,"ref":"aaaa…`.
        let chunk = buf.len().min(4096);
        let served = self.served.fetch_add(chunk as u64, Ordering::SeqCst);
        let prefix = br#"{"id":46,"ref":""#;
        for (i, byte) in buf[..chunk].iter_mut().enumerate() {
            let at = served as usize + i;
            *byte = prefix.get(at).copied().unwrap_or(b'a');
        }
        Ok(chunk)
    }
}

#[test]
fn an_oversized_body_stops_the_read_at_max_bytes_plus_one() {
    let served = Arc::new(AtomicU64::new(0));
    let (closed, connection_closed) = mpsc::channel();
    let counter = Arc::clone(&served);
    let server = Server::start(move |request| {
        let response = tiny_http::Response::new(
            200.into(),
            vec![header("Content-Type", "application/json")],
            Endless {
                served: Arc::clone(&counter),
            },
            None,
            None,
        );
        // The body never ends: `respond` returns only once a write to the connection
        // failed, i.e. the client closed it (tiny_http reports a broken pipe as Ok).
        let _ = request.respond(response);
        let _ = closed.send(());
    });
    let started = Instant::now();
    let (admission, audit) = server.fetch();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(code(&admission), Some((ErrorCode::InvalidResponse, false)));
    let diagnostic = admission.diagnostic().unwrap();
    assert_eq!(diagnostic.stage(), Stage::Limits);
    // The guard took exactly max_bytes + 1 bytes from the body.
    let records = audit.records();
    assert_eq!(records.len(), 1, "a limits rejection is not retried");
    assert_eq!(records[0]["raw_len"], MAX_BYTES + 1);
    // The server side: the connection was closed under it, and what it managed to hand
    // over is bounded by the socket buffers, not the endless body.
    connection_closed
        .recv_timeout(Duration::from_secs(5))
        .expect("the server saw the connection close");
    let served = served.load(Ordering::SeqCst);
    assert!(served > MAX_BYTES, "served {served}");
    assert!(
        served < 32 * 1024 * 1024,
        "served {served}: the client kept reading"
    );
    eprintln!("the server handed {served} bytes to the connection before it closed");
}

#[test]
fn a_body_cut_mid_way_is_a_connection_reset() {
    // A raw socket: the server promises 4096 bytes, sends 100 and closes.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counted.fetch_add(1, Ordering::SeqCst);
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let body = corpus("ci_pipeline_status/accepted/running_compact.json");
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
            );
            let _ = stream.write_all(&body[..100]);
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    });
    let audit = AuditLog::default();
    let connector = CiConnector::new(
        &format!("http://127.0.0.1:{port}"),
        crate::contract("ci_pipeline_status"),
    )
    .unwrap()
    .audit_to(audit.clone())
    .timeout(Duration::from_secs(2));
    let admission = connector.fetch(&request("ci_pipeline_status")).unwrap();
    assert_eq!(
        code(&admission),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    let records = audit.records();
    assert_eq!(records.len(), 3);
    assert!(
        records
            .iter()
            .all(|r| r["diagnostic"]["keyword"] == "connection_reset"),
        "{records:?}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 3);
}

#[test]
fn a_refused_connection_is_unreachable() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let audit = AuditLog::default();
    let connector = CiConnector::new(
        &format!("http://127.0.0.1:{port}"),
        crate::contract("ci_pipeline_status"),
    )
    .unwrap()
    .audit_to(audit.clone());
    let admission = connector.fetch(&request("ci_pipeline_status")).unwrap();
    assert_eq!(
        code(&admission),
        Some((ErrorCode::UpstreamUnavailable, true))
    );
    assert!(audit
        .records()
        .iter()
        .all(|r| r["diagnostic"]["keyword"] == "unreachable"));
}

#[test]
fn a_request_without_its_ids_is_not_sent() {
    let server = json(b"{}");
    let (connector, audit) = server.connector();
    let request =
        airlock_guard::Request::new("req.CiPipe0046", "2026-12-03T09:00:00Z".parse().unwrap())
            .param("project_id", "7");
    let error = connector.fetch(&request).unwrap_err();
    assert!(error.to_string().contains("project_id"), "{error}");
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
    assert!(audit.records().is_empty());
}
