//! Prompts, resources, templates, completions and resource subscriptions through mcp-defer,
//! against the real server-everything (compared with asking it directly) and the fixture.

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    GetPromptRequestParams, Prompt, ReadResourceRequestParams, ResourceContents,
    SubscribeRequestParams,
};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

use crate::support::session::*;
use crate::support::wait::eventually_within;
use crate::support::{BIN, Dir, Peers, assert_contains_all, fixture, peers};

const WAIT: Duration = Duration::from_secs(20);

fn everything(peers: &Peers) -> String {
    format!(
        "[mcp_servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n",
        peers.everything
    )
}

/// A client connected straight to server-everything, to compare answers with.
async fn direct(peers: &Peers) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut command = tokio::process::Command::new(&peers.everything);
    command.arg("stdio");
    let transport = TokioChildProcess::new(command).expect("spawn server-everything");
    ().serve(transport)
        .await
        .expect("handshake with server-everything")
}

fn text(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents { blob, .. } => blob.clone(),
            _ => String::new(),
        })
        .collect()
}

fn prompt_names(prompts: &[Prompt]) -> Vec<String> {
    prompts.iter().map(|p| p.name.clone()).collect()
}

#[tokio::test]
async fn server_everythings_prompts_resources_and_completions_pass_through() {
    let Some(peers) = peers() else { return };
    let setup = Dir::with_config(&everything(&peers));
    let session = Session::start(&setup.file("servers.toml")).await;
    let info = session.client.peer_info().expect("server info");
    let capabilities = &info.capabilities;
    assert_eq!(
        capabilities.prompts.as_ref().and_then(|p| p.list_changed),
        Some(true)
    );
    let resources_capability = capabilities.resources.as_ref();
    assert_eq!(resources_capability.and_then(|r| r.subscribe), Some(true));
    assert_eq!(
        resources_capability.and_then(|r| r.list_changed),
        Some(true)
    );
    assert!(capabilities.completions.is_some());
    // A meta tool waits for every server, so the lists below are complete.
    session.call("search_tools", json!({"query": "echo"})).await;
    let direct = direct(&peers).await;

    // Prompts: the same prompts, in the same order, under qualified names.
    let ours = session
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    let theirs = direct
        .list_all_prompts()
        .await
        .expect("direct prompts/list");
    let qualified: Vec<String> = prompt_names(&theirs)
        .iter()
        .map(|n| format!("everything__{n}"))
        .collect();
    assert_eq!(prompt_names(&ours), qualified);
    assert!(qualified.contains(&"everything__args-prompt".to_owned()));
    let arguments = object(json!({"city": "Paris", "state": "Texas"}));
    let got = session
        .client
        .get_prompt(
            GetPromptRequestParams::new("everything__args-prompt")
                .with_arguments(arguments.clone()),
        )
        .await
        .expect("prompts/get through mcp-defer");
    let want = direct
        .get_prompt(GetPromptRequestParams::new("args-prompt").with_arguments(arguments))
        .await
        .expect("direct prompts/get");
    assert_eq!(got.messages, want.messages);
    assert_eq!(got.description, want.description);
    let unknown = session
        .client
        .get_prompt(GetPromptRequestParams::new("everything__nope"))
        .await;
    assert!(unknown.is_err(), "{unknown:?}");

    // Resources and templates: the same, URIs untouched.
    let ours = session
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let theirs = direct
        .list_all_resources()
        .await
        .expect("direct resources/list");
    assert!(!theirs.is_empty());
    assert_eq!(ours, theirs);
    let ours_t = session
        .client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    let theirs_t = direct
        .list_all_resource_templates()
        .await
        .expect("direct resources/templates/list");
    assert_eq!(ours_t, theirs_t);
    let template = theirs_t
        .iter()
        .map(|t| t.uri_template.clone())
        .find(|t| t.contains("/text/"))
        .expect("a text template");

    // A listed resource reads the same; an unlisted one is routed by its template.
    let listed = &theirs[0].uri;
    let read = |uri: &str| ReadResourceRequestParams::new(uri);
    let got = session
        .client
        .read_resource(read(listed))
        .await
        .expect("read listed");
    let want = direct
        .read_resource(read(listed))
        .await
        .expect("direct read");
    assert_eq!(got.contents, want.contents);
    let dynamic = template.replace("{resourceId}", "7");
    let got = session
        .client
        .read_resource(read(&dynamic))
        .await
        .expect("read templated");
    assert!(
        text(&got.contents).starts_with("Resource 7: This is a plaintext resource"),
        "{:?}",
        got.contents
    );
    let missing = session.client.read_resource(read("nowhere://x")).await;
    let message = format!("{missing:?}");
    assert!(
        missing.is_err() && message.contains("nowhere://x"),
        "{message}"
    );

    // Completions: a prompt argument under our name, a template variable under its URI.
    let departments = session
        .client
        .complete_prompt_argument("everything__completable-prompt", "department", "E", None)
        .await
        .expect("complete a prompt argument");
    assert_eq!(departments.values, ["Engineering"]);
    let ids = session
        .client
        .complete_resource_argument(&template, "resourceId", "12", None)
        .await
        .expect("complete a template variable");
    assert_eq!(ids.values, ["12"]);

    // Subscriptions: server-everything sends an update at once when its updates are
    // switched on, then every 5 s.
    let mut session = session;
    #[expect(deprecated, reason = "a handshake-era client subscribes this way")]
    session
        .client
        .subscribe(SubscribeRequestParams::new(listed.clone()))
        .await
        .expect("resources/subscribe");
    session
        .call(
            "call_tool",
            json!({"name": "everything__toggle-subscriber-updates"}),
        )
        .await;
    let updated = tokio::time::timeout(WAIT, session.updated.recv())
        .await
        .expect("resources/updated in time");
    assert_eq!(updated.as_deref(), Some(listed.as_str()));

    let _ = direct.cancel().await;
    session.close().await;
}

#[tokio::test]
async fn prompts_list_only_grows_as_a_server_joins_and_a_dropped_prompt_answers_an_error() {
    let setup = Dir::with_config(&format!(
        "{}{}",
        fixture("alpha", &["--name", "alpha", "--prompt", "greet"], ""),
        fixture(
            "beta",
            &[
                "--name",
                "beta",
                "--slow-start-ms",
                "1500",
                "--prompt",
                "review code",
                "--prompt",
                "greet"
            ],
            ""
        ),
    ));
    let mut session = Session::start(&setup.file("servers.toml")).await;
    let first = session
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    assert_eq!(
        prompt_names(&first),
        ["alpha__greet"],
        "beta is still starting"
    );

    let changed = tokio::time::timeout(WAIT, session.prompts_changed.recv()).await;
    assert!(
        matches!(changed, Ok(Some(()))),
        "prompts/list_changed when beta joins"
    );
    let second = session
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    assert_eq!(
        prompt_names(&second),
        ["alpha__greet", "beta__review_code", "beta__greet"]
    );
    assert_eq!(bytes_of(&second[..1]), bytes_of(&first));

    let got = session
        .client
        .get_prompt(
            GetPromptRequestParams::new("beta__review_code")
                .with_arguments(object(json!({"topic": "the parser"}))),
        )
        .await
        .expect("prompts/get");
    let said = format!("{:?}", got.messages);
    assert_contains_all(&said, &["review code about the parser, from beta"]);

    // beta drops a prompt: it stays listed, and getting it names the server.
    session
        .call_through("beta__drop-prompt", json!({"name": "greet"}))
        .await;
    let dropped = eventually_within(WAIT, "the drop reaches mcp-defer", async || {
        let result = session
            .client
            .get_prompt(GetPromptRequestParams::new("beta__greet"))
            .await;
        // Until the re-list lands, beta itself answers that it has no such prompt.
        match result {
            Err(err) if err.to_string().contains("no longer offers") => Some(err.to_string()),
            _ => None,
        }
    })
    .await;
    assert_contains_all(&dropped, &["'beta'", "greet"]);
    let third = session
        .client
        .list_all_prompts()
        .await
        .expect("prompts/list");
    assert_eq!(
        bytes_of(&third),
        bytes_of(&second),
        "a dropped prompt stays listed"
    );
    session.close().await;
}

#[tokio::test]
async fn a_uri_two_servers_list_belongs_to_the_first_in_config_order() {
    // first comes up last: ownership must not depend on who connected first.
    let setup = Dir::with_config(&format!(
        "{}{}",
        fixture(
            "first",
            &[
                "--name",
                "first",
                "--slow-start-ms",
                "600",
                "--resource",
                "shared://doc",
                "--resource",
                "first://own"
            ],
            ""
        ),
        fixture(
            "second",
            &["--name", "second", "--resource", "shared://doc"],
            ""
        ),
    ));
    let session = Session::start(&setup.file("servers.toml")).await;
    session.call("search_tools", json!({"query": "echo"})).await;
    let listed = session
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["shared://doc", "first://own"],
        "listed once, config order"
    );
    let read = session
        .client
        .read_resource(ReadResourceRequestParams::new("shared://doc"))
        .await
        .expect("read the shared URI");
    assert_eq!(text(&read.contents), "shared://doc served by first");
    session.close().await;
}

fn bytes_of(prompts: &[Prompt]) -> Vec<String> {
    prompts
        .iter()
        .map(|p| serde_json::to_string(p).expect("serialize"))
        .collect()
}

#[test]
fn the_python_sdk_uses_prompts_resources_and_completions_in_both_eras() {
    let Some(peers) = peers() else { return };
    // `any`: the 2026-07-28 run is answered in its era (the default refuses discover where
    // tools load on request).
    let setup = Dir::with_config(&format!(
        "[settings]\nclient_era = \"any\"\n\n{}",
        everything(&peers)
    ));
    let config = setup.file("servers.toml");
    for era in ["legacy", "2026-07-28"] {
        let stdout = peers.python(
            "passthrough_session.py",
            &[
                BIN.as_ref(),
                config.as_os_str(),
                peers.everything.as_os_str(),
                era.as_ref(),
            ],
        );
        assert_contains_all(&stdout, &[&format!("\"era\": \"{era}\"")]);
        assert_contains_all(&stdout, &["\"updated\": \"demo://"]);
    }
}
