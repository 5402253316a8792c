//! `[profiles.<name>]`: servers that exist and a view in file order.

use super::*;

#[test]
fn profiles_name_servers_that_exist_and_give_a_view_in_file_order() {
    let text = lines(&[
        "[mcp_servers.docs]",
        "command = \"docs\"",
        "[mcp_servers.time]",
        "command = \"time\"",
        "[profiles.work]",
        "servers = [\"time\", \"docs\"]",
    ]);
    let config = ok(&text);
    let (view, positions) = config.for_profile("work").unwrap();
    let names: Vec<&str> = view.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["docs", "time"], "file order, not the profile's");
    assert_eq!(positions, [0, 1]);
    let unknown = config.for_profile("wrk").unwrap_err().to_string();
    assert!(
        unknown.ends_with("no `[profiles.wrk]` table; did you mean `work`?"),
        "{unknown}"
    );
    fails(
        &lines(&[
            "[mcp_servers.docs]",
            "command = \"docs\"",
            "[profiles.work]",
            "servers = [\"doc\"]",
        ]),
        4,
        &[
            "[profiles.work] names the server `doc`",
            "did you mean `docs`?",
        ],
    );
    fails(
        &lines(&["[profiles.\"a b\"]", "servers = []"]),
        1,
        &["only letters, digits"],
    );
    fails(
        "[profiles.work]\nserver = []\n",
        2,
        &["did you mean `servers`"],
    );
}
