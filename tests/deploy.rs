//! The files docs/deploy.md points at are what they claim: the Kubernetes manifests parse
//! as YAML with the objects and fields described, their servers.toml loads (and the command
//! they run refuses nothing the config asks), the Containerfile is made of instructions only,
//! and `haproxy -c` accepts deploy/haproxy.cfg (HAProxy missing fails the test unless
//! skipping is allowed, `support::missing_peer`).

use std::path::Path;
use std::process::Command;

use yaml_rust2::{Yaml, YamlLoader};

use crate::support::Dir;

fn deploy(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_kubernetes_manifests_parse_and_serve_with_tokens_behind_affinity() {
    let docs = YamlLoader::load_from_str(&deploy("kubernetes.yaml")).expect("valid YAML");
    let kinds: Vec<&str> = docs.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["ConfigMap", "Deployment", "Service"]);
    let [config_map, deployment, service] = &docs[..] else {
        unreachable!()
    };

    let toml = config_map["data"]["servers.toml"]
        .as_str()
        .expect("servers.toml");
    let dir = Dir::with_config(toml);
    let loaded = mcp_defer::config::Config::load(&dir.file("servers.toml")).expect("loads");
    assert!(
        loaded.settings.http.tokens.is_some(),
        "a non-loopback bind needs tokens"
    );

    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let args: Vec<&str> = (container["args"].as_vec().unwrap().iter())
        .filter_map(Yaml::as_str)
        .collect();
    assert_eq!(args, ["serve", "--http", "0.0.0.0:8765"]);
    let env: Vec<&str> = (container["env"].as_vec().unwrap().iter())
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(env, ["MCP_DEFER_CONFIG", "MCP_DEFER_TOKENS"]);
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(
            container[probe]["httpGet"]["path"].as_str(),
            Some(path),
            "{probe}"
        );
    }
    assert_eq!(
        container["env"][1]["valueFrom"]["secretKeyRef"]["name"].as_str(),
        Some("mcp-defer-tokens")
    );
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"]["app"],
        service["spec"]["selector"]["app"]
    );
    assert_eq!(
        service["spec"]["sessionAffinity"].as_str(),
        Some("ClientIP")
    );
    assert_eq!(
        service["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].as_i64(),
        Some(loaded.settings.session_idle.as_secs() as i64),
        "affinity lasts as long as an idle session"
    );
}

#[test]
fn the_containerfile_is_instructions_only_and_runs_serve_http() {
    const INSTRUCTIONS: &[&str] = &[
        "FROM",
        "WORKDIR",
        "COPY",
        "RUN",
        "ENV",
        "EXPOSE",
        "ENTRYPOINT",
        "CMD",
        "USER",
        "ARG",
        "LABEL",
    ];
    let text = deploy("Containerfile");
    let mut continued = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !continued && !trimmed.is_empty() && !trimmed.starts_with('#') {
            let word = trimmed.split_whitespace().next().unwrap();
            assert!(INSTRUCTIONS.contains(&word), "not an instruction: {line}");
        }
        continued = trimmed.ends_with('\\');
    }
    assert!(text.contains(r#"CMD ["serve", "--http", "0.0.0.0:8765"]"#));
}

#[test]
fn haproxy_accepts_the_load_balancer_config() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/haproxy.cfg");
    match Command::new("haproxy")
        .arg("-c")
        .arg("-f")
        .arg(&path)
        .output()
    {
        Ok(out) => assert!(out.status.success(), "{out:?}"),
        Err(e) => crate::support::missing_peer(
            &format!("haproxy is missing ({e})"),
            ".ci/install-peers installs it",
        ),
    }
}
