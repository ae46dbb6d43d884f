//! The rmcp handler: server identity and capabilities, the session lifecycle (one
//! `initialize` per session, the log level), the tool list, and dispatch of `tools/call` to
//! the gateway. Arguments are decoded before any tool logic; results become
//! `structuredContent` plus the same JSON as text (the text left out for a session that
//! declared [`STRUCTURED_ONLY_CAPABILITY`]); refusals, arguments that do not fit the schema
//! included, become `isError: true` with the `ErrorBody` as text.
//!
//! `dispatch.rs`: each tool to its gateway method; `answer.rs`: a call's answer and its
//! count in the metrics.
// The logging capability and `logging/setLevel` are deprecated in rmcp's newest protocol
// revision; the revisions this server speaks define them.
#![expect(deprecated, reason = "MCP logging is part of the protocol revisions served")]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use codespace_gateway::Gateway;
use codespace_protocol::{SERVER_NAME, STRUCTURED_ONLY_CAPABILITY};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    SetLevelRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tracing::Instrument;

use crate::logging::{self, SessionLevel};
use crate::metrics::Metrics;
use answer::Shape;

mod answer;
mod dispatch;

/// One handler per MCP session; every clone shares the same gateway. `CodeSpace::session`
/// makes the handler of a new session, with its own lifecycle state.
#[derive(Clone)]
pub struct CodeSpace {
    gateway: Arc<Gateway>,
    tools: Arc<Vec<Tool>>,
    instructions: Arc<str>,
    /// Set by the session's `initialize`: a second one is refused.
    initialized: Arc<AtomicBool>,
    /// How this session's successes are shaped, set by its `initialize`.
    shape: Arc<OnceLock<Shape>>,
    log_level: Arc<SessionLevel>,
    /// How long a held call waits for a person's answer through elicitation.
    elicit_wait: std::time::Duration,
    /// Every call is counted and timed here; `/metrics` reads it.
    metrics: Arc<Metrics>,
    /// Where the server is in its life, for `/readyz`.
    health: Arc<crate::health::Health>,
    /// The tasks this server runs now (the Tasks extension), shared by every session.
    tasks: Arc<crate::tasks::Running>,
}

impl CodeSpace {
    /// The handler of every session over `gateway`; a held call waits `elicit_wait` for a
    /// person's answer.
    pub fn new(gateway: Arc<Gateway>, elicit_wait: std::time::Duration) -> Self {
        CodeSpace {
            gateway,
            elicit_wait,
            tools: crate::tools::catalog(),
            instructions: crate::instructions::text().into(),
            initialized: Arc::new(AtomicBool::new(false)),
            shape: Arc::new(OnceLock::new()),
            log_level: SessionLevel::new(),
            metrics: Metrics::new(),
            health: crate::health::Health::new(),
            tasks: Arc::default(),
        }
    }

    /// The handler counting its calls in `metrics` (shared with the ledger's commit times).
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// The metrics every session counts its calls in.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Where the server is in its life, as `/readyz` reports it.
    pub fn health(&self) -> Arc<crate::health::Health> {
        self.health.clone()
    }

    /// The gateway every session shares (the `/inbox` API uses it too).
    pub(crate) fn gateway(&self) -> Arc<Gateway> {
        self.gateway.clone()
    }

    /// What the task methods work with.
    fn task_door(&self) -> crate::tasks::Tasks {
        crate::tasks::Tasks {
            gateway: self.gateway.clone(),
            running: self.tasks.clone(),
            metrics: self.metrics.clone(),
        }
    }

    /// The handler of a new session: the same gateway and catalog, a fresh lifecycle.
    pub(crate) fn session(&self) -> Self {
        CodeSpace {
            initialized: Arc::new(AtomicBool::new(false)),
            shape: Arc::new(OnceLock::new()),
            log_level: SessionLevel::new(),
            ..self.clone()
        }
    }
}

impl ServerHandler for CodeSpace {
    fn get_info(&self) -> ServerConfig {
        let structured_only = [(STRUCTURED_ONLY_CAPABILITY.to_owned(), Default::default())];
        let capabilities = ServerCapabilities::builder()
            .enable_experimental_with(structured_only.into_iter().collect())
            .enable_logging()
            .enable_tools()
            .build();
        let mut capabilities = capabilities;
        let extensions = capabilities.extensions.get_or_insert_with(Default::default);
        extensions.insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        #[cfg(feature = "conformance-fixtures")]
        let capabilities = crate::fixtures::capabilities(capabilities);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.to_string())
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.initialized.swap(true, Ordering::SeqCst) {
            return Err(McpError::invalid_request(
                "this session is already initialized: initialize is sent once per session",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        // Set once: `initialized` refuses a second initialize above.
        let _ = self.shape.set(Shape::declared_by(&request));
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        logging::attach(context.peer, self.log_level.clone());
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        #[allow(unused_mut, reason = "the fixture build appends its tools")]
        let mut tools = self.tools.as_ref().clone();
        #[cfg(feature = "conformance-fixtures")]
        tools.extend(crate::fixtures::tools());
        #[cfg(feature = "conformance-fixtures")]
        tools.extend(crate::task_fixtures::tools());
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let found = self.tools.iter().find(|t| t.name == name).cloned();
        #[cfg(feature = "conformance-fixtures")]
        let found = found.or_else(|| crate::fixtures::tools().into_iter().find(|t| t.name == name));
        #[cfg(feature = "conformance-fixtures")]
        let found =
            found.or_else(|| crate::task_fixtures::tools().into_iter().find(|t| t.name == name));
        found
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.clone();
        let name = name.as_ref();
        let traceparent = (request.meta.as_ref().and_then(|m| m.get_traceparent()))
            .or_else(|| context.meta.get_traceparent());
        let span = crate::trace::call_span(name, &context.id, traceparent);
        // A task's work runs on in the call's span.
        let door = self.task_door();
        let task = crate::tasks::start(&door, &request, &context);
        if let Some(answer) = task.instrument(span.clone()).await {
            return answer;
        }
        #[cfg(feature = "conformance-fixtures")]
        if let Some(answer) = crate::task_fixtures::call(&request, &context).await {
            return answer;
        }
        #[cfg(feature = "conformance-fixtures")]
        if let Some(answer) = crate::fixtures::call(name, &request, &context).await {
            return answer;
        }
        let answer = self.dispatch(name, request, &context).instrument(span).await;
        match answer {
            Some(answer) => answer,
            // An unknown tool is the client's protocol error, not the model's.
            None => Err(McpError::invalid_params(format!("tool not found: {name}"), None)),
        }
    }

    /// A method this server does not know: -32601 naming it.
    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        let message = format!("Method not found: {}", request.method);
        Err(McpError::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, message, None))
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        crate::tasks::get(&self.gateway, request.task_id).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let traceparent = (request.meta.as_ref().and_then(|m| m.get_traceparent()))
            .or_else(|| context.meta.get_traceparent());
        let span = crate::trace::call_span("tasks/update", &context.id, traceparent);
        let (id, responses) = (request.task_id, request.input_responses);
        crate::tasks::input::update(&self.task_door(), id, responses, span).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::tasks::cancel(&self.task_door(), request.task_id).await
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, McpError> {
        crate::fixtures::list_resources()
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        crate::fixtures::list_resource_templates()
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        crate::fixtures::read_resource(&request).map(Into::into)
    }

    #[cfg(feature = "conformance-fixtures")]
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(crate::fixtures::accepted_subscription_filter(requested))
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn subscribe(
        &self,
        _request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn unsubscribe(
        &self,
        _request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        crate::fixtures::list_prompts()
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        crate::fixtures::get_prompt(&request)
    }

    #[cfg(feature = "conformance-fixtures")]
    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        crate::fixtures::complete(&request)
    }
}
