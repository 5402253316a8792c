//! Random input on mcp-defer's stdin: random bytes, random JSON, and JSON-RPC requests with
//! random methods and params. Every request gets exactly one answer carrying its id, nothing
//! is answered that was not asked (up to a sentinel request sent once all are answered), and
//! mcp-defer keeps serving. `FUZZ_CASES=500 cargo test
//! fuzz -- --nocapture` runs it longer; `.ci/run` runs a few cases.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::raw::RawClient;
use crate::support::{Dir, fixture};

/// Methods a client may send, real and not; `subscriptions/listen` is left out, since a
/// listen request is answered only when its stream ends.
const METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "no/such/method",
];

/// Ids of requests start here: far from anything a random line could spell.
const FIRST_ID: u64 = 9_000_000_000;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        "\\PC{0,40}".prop_map(Value::String),
        prop::sample::select(vec![
            "fx__echo",
            "fx__add",
            "call_tool",
            "search_tools",
            "x"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "name",
                        "arguments",
                        "uri",
                        "ref",
                        "cursor",
                        "_meta",
                        "a",
                        "ms",
                        "query",
                        "names",
                        "progressToken"
                    ]),
                    inner
                ),
                0..5
            )
            .prop_map(|pairs| Value::Object(
                pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// One line to send: a request (true) that must be answered under its id, or anything else.
#[derive(Debug, Clone)]
enum Input {
    Request { method: String, params: Value },
    Bytes(Vec<u8>),
    Json(Value),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (prop::sample::select(METHODS), json_value()).prop_map(|(m, params)| Input::Request {
            method: m.to_owned(),
            params,
        }),
        1 => prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 0..200)
            .prop_map(Input::Bytes),
        1 => json_value().prop_map(Input::Json),
    ]
}

async fn run(inputs: Vec<Input>) -> Result<(), String> {
    let dir = Dir::with_config(&fixture("fx", &[], "tool_timeout_sec = 2"));
    let mut client = RawClient::legacy(&dir.file("servers.toml")).await;
    let mut expected: HashMap<u64, String> = HashMap::new();
    for (n, input) in inputs.iter().enumerate() {
        match input {
            Input::Request { method, params } => {
                let id = FIRST_ID + n as u64;
                expected.insert(id, method.clone());
                let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                client.send(&line).await;
            }
            Input::Bytes(bytes) => client.send_line(bytes).await,
            Input::Json(value) => client.send(value).await,
        }
    }
    let last = FIRST_ID + inputs.len() as u64;
    client
        .send(&json!({"jsonrpc": "2.0", "id": last, "method": "ping"}))
        .await;
    expected.insert(last, "ping".into());
    let mut answered: HashMap<u64, usize> = HashMap::new();
    while answered.len() < expected.len() {
        let Some(message) = client.next_within(Duration::from_secs(15)).await else {
            let missing: Vec<_> = expected
                .iter()
                .filter(|(id, _)| !answered.contains_key(id))
                .collect();
            return Err(format!("no answer to {missing:?}"));
        };
        if message.get("method").is_some() {
            continue;
        }
        match message["id"]
            .as_u64()
            .filter(|id| expected.contains_key(id))
        {
            Some(id) => {
                let count = answered.entry(id).or_default();
                *count += 1;
                if *count > 1 {
                    return Err(format!("two answers to {id}: {message}"));
                }
            }
            // A line whose id could not be read is answered with id null.
            None if message["id"].is_null() => {}
            None => return Err(format!("an answer to nothing that was asked: {message}")),
        }
    }
    // Every request has its answer; a sentinel shows nothing else was written meanwhile (a
    // late second answer, an answer to an id never sent).
    let strays = client.strays().await;
    if !strays.is_empty() {
        return Err(format!("answers after the last expected one: {strays:?}"));
    }
    client.close().await;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(6),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]
    #[test]
    fn every_request_is_answered_once_whatever_else_comes(inputs in prop::collection::vec(input(), 1..120)) {
        let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
        let outcome = runtime.block_on(run(inputs));
        prop_assert!(outcome.is_ok(), "{}", outcome.err().unwrap_or_default());
    }
}
