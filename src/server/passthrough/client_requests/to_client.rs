//! The handshake-era half: a server's request sent to the client as a server→client
//! request ([`send`]), once the client declared what answering it takes ([`lacking`]).

use rmcp::model::{
    ClientCapabilities, ClientResult, ElicitRequestParams, ErrorData, InputRequest, RequestId,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

/// Sends `request` to a handshake-era client and waits for its answer. Withdrawn when the
/// server withdraws it (`server`) or the client cancels the call it belongs to (`call`):
/// the client is then told with `notifications/cancelled`.
pub(super) async fn send(
    peer: Peer<RoleServer>,
    request: InputRequest,
    originating: Option<RequestId>,
    server: CancellationToken,
    call: CancellationToken,
) -> Result<ClientResult, ErrorData> {
    let mut request = match request {
        InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
        InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
        InputRequest::ListRoots(r) => ServerRequest::ListRootsRequest(r),
        _ => {
            return Err(ErrorData::invalid_request(
                "mcp-defer cannot carry this request to the client",
                None,
            ));
        }
    };
    // rmcp tags requests sent from inside a handler's task; ours come from the downstream
    // connection's task, so the tag is set here (Streamable HTTP routes by it).
    if let Some(id) = originating {
        use rmcp::model::GetExtensions;
        request.extensions_mut().insert(OriginatingRequestId(id));
    }
    // Sent from a task of its own: we run inside the downstream connection's handler for
    // the server's request, whose task-local origin rmcp would stamp over ours (the
    // server's own request id, unknown to this session), and the request would fall back
    // to the GET stream a client may never open.
    let sent = tokio::spawn(async move {
        peer.send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
    });
    let handle = match sent.await {
        Ok(handle) => handle.map_err(client_error)?,
        Err(_) => return Err(client_error(ServiceError::TransportClosed)),
    };
    let mut handle = handle;
    let answer = tokio::select! {
        answer = &mut handle.rx => answer,
        () = server.cancelled() => {
            let _ = handle.cancel(Some("withdrawn by the server".into())).await;
            return Err(ErrorData::invalid_request("withdrawn", None));
        }
        () = call.cancelled() => {
            let _ = handle.cancel(Some("the client cancelled the call".into())).await;
            return Err(ErrorData::invalid_request("the client cancelled the call", None));
        }
    };
    match answer {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(err)) => Err(client_error(err)),
        Err(_) => Err(client_error(ServiceError::TransportClosed)),
    }
}

/// The client's own error passes through unchanged; anything else is named.
fn client_error(err: ServiceError) -> ErrorData {
    match err {
        ServiceError::McpError(data) => data,
        other => ErrorData::internal_error(format!("the client could not be asked: {other}"), None),
    }
}

/// What the client would need to answer `request` and did not declare, if anything.
#[expect(
    deprecated,
    reason = "sampling tools are deprecated with sampling (SEP-2577)"
)]
pub(super) fn lacking(
    capabilities: Option<&ClientCapabilities>,
    request: &InputRequest,
) -> Option<String> {
    let none = ClientCapabilities::default();
    let capabilities = capabilities.unwrap_or(&none);
    match request {
        InputRequest::CreateMessage(r) => match &capabilities.sampling {
            None => Some("the sampling capability".into()),
            Some(sampling)
                if (r.params.tools.is_some() || r.params.tool_choice.is_some())
                    && sampling.tools.is_none() =>
            {
                Some("sampling.tools (tools in a sampling request)".into())
            }
            Some(_) => None,
        },
        InputRequest::Elicitation(r) => match (&capabilities.elicitation, &r.params) {
            (None, _) => Some("the elicitation capability".into()),
            (Some(e), ElicitRequestParams::UrlElicitationParams { .. }) if e.url.is_none() => {
                Some("elicitation.url (URL-mode elicitation)".into())
            }
            // `elicitation: {}` means form mode, for clients older than the sub-capabilities.
            (Some(e), ElicitRequestParams::FormElicitationParams { .. })
                if e.form.is_none() && e.url.is_some() =>
            {
                Some("elicitation.form (form-mode elicitation)".into())
            }
            (Some(_), _) => None,
        },
        InputRequest::ListRoots(_) => capabilities
            .roots
            .is_none()
            .then(|| "the roots capability".into()),
        _ => Some("support for this request".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ElicitRequest, ElicitationCapability, UrlElicitationCapability};
    use serde_json::json;

    fn elicit(params: serde_json::Value) -> InputRequest {
        let params: ElicitRequestParams =
            serde_json::from_value(params).unwrap_or_else(|e| panic!("{e}"));
        InputRequest::Elicitation(ElicitRequest::new(params))
    }

    #[test]
    fn names_the_capability_the_client_lacks() {
        let url = elicit(
            json!({"mode": "url", "message": "m", "url": "https://example.com", "elicitationId": "e"}),
        );
        let form = elicit(
            json!({"message": "m", "requestedSchema": {"type": "object", "properties": {}}}),
        );
        assert_eq!(
            lacking(None, &form).as_deref(),
            Some("the elicitation capability")
        );
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(ElicitationCapability::new());
        assert_eq!(lacking(Some(&caps), &form), None);
        assert_eq!(
            lacking(Some(&caps), &url).as_deref(),
            Some("elicitation.url (URL-mode elicitation)")
        );
        caps.elicitation =
            Some(ElicitationCapability::new().with_url(UrlElicitationCapability::default()));
        assert_eq!(lacking(Some(&caps), &url), None);
        assert!(lacking(Some(&caps), &form).is_some());
        let roots = InputRequest::ListRoots(Default::default());
        assert_eq!(
            lacking(Some(&caps), &roots).as_deref(),
            Some("the roots capability")
        );
    }
}
