//! Raw answers from a Streamable HTTP server, as [`super::child_transport`] takes them
//! from a stdio server (`tasks.rs` says why: rmcp's decoding drops the 2025-11-25 fields
//! of `tools/list` and of the task answers).
//!
//! rmcp's HTTP transport parses each SSE event's `data` into its `ServerResult` inside
//! the transport, where nothing can reach it. So the raw JSON is read one step earlier, by
//! [`RawClient`] wrapping the HTTP client: for a request [`RawAnswers`] notes, each event
//! of its answer stream is looked at as it passes (unchanged) and the answer to the noted
//! id is kept, raw, in the shared [`Stash`]. Then the stash, as the [`Hook`] of a
//! [`Tap`] on rmcp's transport, hands that raw answer on in place of rmcp's decoded one. An answer sent as
//! one `application/json` body is decoded inside rmcp's HTTP client, before any wrapper
//! sees it: such an answer still arrives decoded (docs/design.md section 12).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::raw_answers::RawAnswers;
use super::tap::{Hook, Tap};

/// The ids to read raw, and the raw answers read, for one HTTP connection.
#[derive(Debug, Default)]
struct StashInner {
    noted: RawAnswers,
    answers: HashMap<RequestId, ServerJsonRpcMessage>,
}

/// Shared by one connection's [`RawClient`] and the [`Tap`] on its transport.
#[derive(Debug, Clone, Default)]
pub(super) struct Stash(Arc<Mutex<StashInner>>);

impl Stash {
    fn lock(&self) -> std::sync::MutexGuard<'_, StashInner> {
        crate::sync::lock(&self.0)
    }

    /// Keeps the answer in one SSE event's `data`, when it answers a noted request.
    fn look_at(&self, data: &str) {
        let mut inner = self.lock();
        if let Some(message) = inner.noted.take(data)
            && let JsonRpcMessage::Response(response) = &message
        {
            let id = response.id.clone();
            inner.answers.insert(id, message);
        }
    }

    /// The raw answer kept for `message`'s id, in its place.
    fn swap(&self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        match &message {
            JsonRpcMessage::Response(response) => {
                self.lock().answers.remove(&response.id).unwrap_or(message)
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.lock().answers.remove(id);
                }
                message
            }
            _ => message,
        }
    }
}

/// An HTTP client that shows the answers to noted requests to the [`Stash`] on the way.
#[derive(Clone)]
pub(super) struct RawClient<C> {
    inner: C,
    stash: Stash,
}

impl<C> RawClient<C> {
    pub(super) fn new(inner: C, stash: Stash) -> RawClient<C> {
        RawClient { inner, stash }
    }

    fn watched(
        &self,
        events: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let stash = self.stash.clone();
        events
            .map(move |event| {
                if let Ok(sse) = &event
                    && let Some(data) = &sse.data
                {
                    stash.look_at(data);
                }
                event
            })
            .boxed()
    }

    fn answered(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(self.watched(events), session)
            }
            other => other,
        }
    }
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for RawClient<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stash.lock().noted.note(&message);
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.answered(response))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stash.lock().noted.note(&message);
        let response = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.answered(response))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stash.lock().noted.note(&message);
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(self.answered(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        // A resumed answer stream (`Last-Event-ID`) carries answers too.
        let events = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.watched(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let events = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.watched(events))
    }
}

/// rmcp's HTTP transport to a server through `client`, with the answers to noted
/// requests read raw: [`RawClient`] keeps them, and the [`Stash`] as the transport's
/// [`Hook`] hands each on in place of rmcp's decoded one.
pub(super) fn transport<C>(
    client: C,
    config: StreamableHttpClientTransportConfig,
) -> Tap<StreamableHttpClientTransport<RawClient<C>>, Stash>
where
    C: StreamableHttpClient + Sync + Send + 'static,
{
    let stash = Stash::default();
    let client = RawClient::new(client, stash.clone());
    Tap::new(
        StreamableHttpClientTransport::with_client(client, config),
        stash,
    )
}

impl Hook for Stash {
    async fn received(&mut self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        Some(self.swap(message))
    }
}
