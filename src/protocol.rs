//! MCP's method and header names as the wire spells them, for the code that reads or
//! writes messages as JSON or bytes (the HTTP gate, the stdio judge, the relay, task
//! forwarding) rather than through rmcp's typed models. One place, so a method the gate
//! counts, the judge admits and the relay replays is one name. Each comes from rmcp's own
//! constant where rmcp has one; the 2025-11-25 task methods rmcp no longer models are
//! spelled here.

/// JSON-RPC method names.
pub(crate) mod method {
    use rmcp::model::{self as m, ConstString};

    pub(crate) const INITIALIZE: &str = <m::InitializeResultMethod as ConstString>::VALUE;
    pub(crate) const INITIALIZED: &str = <m::InitializedNotificationMethod as ConstString>::VALUE;
    pub(crate) const SERVER_DISCOVER: &str = <m::DiscoverRequestMethod as ConstString>::VALUE;
    pub(crate) const PING: &str = <m::PingRequestMethod as ConstString>::VALUE;
    pub(crate) const TOOLS_LIST: &str = <m::ListToolsRequestMethod as ConstString>::VALUE;
    pub(crate) const TOOLS_CALL: &str = <m::CallToolRequestMethod as ConstString>::VALUE;
    pub(crate) const TOOLS_LIST_CHANGED: &str =
        <m::ToolListChangedNotificationMethod as ConstString>::VALUE;
    pub(crate) const PROMPTS_LIST: &str = <m::ListPromptsRequestMethod as ConstString>::VALUE;
    pub(crate) const PROMPTS_GET: &str = <m::GetPromptRequestMethod as ConstString>::VALUE;
    pub(crate) const RESOURCES_LIST: &str = <m::ListResourcesRequestMethod as ConstString>::VALUE;
    pub(crate) const RESOURCES_TEMPLATES_LIST: &str =
        <m::ListResourceTemplatesRequestMethod as ConstString>::VALUE;
    pub(crate) const RESOURCES_READ: &str = <m::ReadResourceRequestMethod as ConstString>::VALUE;
    pub(crate) const RESOURCES_SUBSCRIBE: &str = <m::SubscribeRequestMethod as ConstString>::VALUE;
    pub(crate) const RESOURCES_UNSUBSCRIBE: &str =
        <m::UnsubscribeRequestMethod as ConstString>::VALUE;
    pub(crate) const COMPLETION_COMPLETE: &str = <m::CompleteRequestMethod as ConstString>::VALUE;
    pub(crate) const LOGGING_SET_LEVEL: &str = <m::SetLevelRequestMethod as ConstString>::VALUE;
    pub(crate) const CANCELLED: &str = <m::CancelledNotificationMethod as ConstString>::VALUE;
    pub(crate) const SAMPLING_CREATE_MESSAGE: &str =
        <m::CreateMessageRequestMethod as ConstString>::VALUE;
    pub(crate) const ELICITATION_CREATE: &str =
        <m::ElicitationCreateRequestMethod as ConstString>::VALUE;
    pub(crate) const ROOTS_LIST: &str = <m::ListRootsRequestMethod as ConstString>::VALUE;
    /// Tasks as 2025-11-25 has them (the methods mcp-defer forwards to servers of that era).
    pub(crate) const TASKS_GET: &str = "tasks/get";
    pub(crate) const TASKS_RESULT: &str = "tasks/result";
    pub(crate) const TASKS_LIST: &str = "tasks/list";
    pub(crate) const TASKS_CANCEL: &str = "tasks/cancel";
    pub(crate) const TASKS_STATUS: &str = "notifications/tasks/status";
}

/// Streamable HTTP header names (as the spec spells them; HTTP compares them without
/// regard to case).
pub(crate) mod header {
    pub(crate) const MCP_SESSION_ID: &str = rmcp::transport::common::http_header::HEADER_SESSION_ID;
    pub(crate) const MCP_PROTOCOL_VERSION: &str =
        rmcp::transport::common::http_header::HEADER_MCP_PROTOCOL_VERSION;
    /// 2026-07-28's standard headers (SEP-2243): the request's method and the name it
    /// targets, which rmcp checks against the body.
    pub(crate) const MCP_METHOD: &str = rmcp::transport::common::http_header::HEADER_MCP_METHOD;
    pub(crate) const MCP_NAME: &str = rmcp::transport::common::http_header::HEADER_MCP_NAME;
}
