//! The rmcp handler: server identity, the tool list, and dispatch of `tools/call` to the
//! gateway. Arguments are decoded before any tool logic; results become `structuredContent`
//! plus the same JSON as text; refusals become `isError: true` with the `ErrorBody` as text.

use std::sync::Arc;

use codespace_gateway::{Cancel, Gateway, GatewayError};
use codespace_protocol::{SERVER_NAME, tool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

/// One handler per MCP session; every clone shares the same gateway.
#[derive(Clone)]
pub(crate) struct CodeSpace {
    gateway: Arc<Gateway>,
    tools: Arc<Vec<Tool>>,
    instructions: Arc<str>,
}

impl CodeSpace {
    pub(crate) fn new(gateway: Arc<Gateway>) -> Self {
        CodeSpace {
            gateway,
            tools: crate::tools::catalog(),
            instructions: crate::instructions::text().into(),
        }
    }
}

/// Decodes tool arguments; a failure is the caller's protocol error (-32602), naming the
/// field serde complained about.
fn decode<T: DeserializeOwned>(
    name: &str,
    args: Option<rmcp::model::JsonObject>,
) -> Result<T, McpError> {
    let value = serde_json::Value::Object(args.unwrap_or_default());
    serde_json::from_value(value)
        .map_err(|e| McpError::invalid_params(format!("invalid arguments for {name}: {e}"), None))
}

fn respond<T: Serialize>(result: Result<T, GatewayError>) -> Result<CallToolResponse, McpError> {
    match result {
        Ok(value) => {
            let json = serde_json::to_value(value).map_err(|e| {
                McpError::internal_error(format!("result serialization failed: {e}"), None)
            })?;
            Ok(CallToolResult::structured(json).into())
        }
        Err(e) => {
            let body = e.to_body();
            tracing::debug!(code = %body.code, "tool refused");
            let text = serde_json::to_string(&body).map_err(|e| {
                McpError::internal_error(format!("error serialization failed: {e}"), None)
            })?;
            Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
        }
    }
}

/// The blocking file tools poll a plain flag; this raises it when the request's token is
/// cancelled (`notifications/cancelled`), and stops watching when the call ends.
struct CancelBridge {
    flag: Cancel,
    watch: tokio::task::JoinHandle<()>,
}

impl CancelBridge {
    fn new(ct: &CancellationToken) -> CancelBridge {
        let flag = Cancel::new();
        let (raise, ct) = (flag.clone(), ct.clone());
        let watch = tokio::spawn(async move {
            ct.cancelled().await;
            raise.cancel();
        });
        CancelBridge { flag, watch }
    }
}

impl Drop for CancelBridge {
    fn drop(&mut self) {
        self.watch.abort();
    }
}

/// Logs a waiting call that ended because its request was cancelled: rmcp sends no reply to
/// a cancelled request, so this line is the only trace that the wait ended then.
fn note_cancelled(context: &RequestContext<RoleServer>, name: &str) {
    if context.ct.is_cancelled() {
        tracing::debug!(
            "request {} ({name}) cancelled: its wait ended, no reply is sent",
            context.id
        );
    }
}

impl ServerHandler for CodeSpace {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        let args = request.arguments;
        let g = &self.gateway;
        match name {
            tool::WORKSPACE_INFO => respond(g.workspace_info(decode(name, args)?).await),
            tool::READ => respond(g.read(decode(name, args)?).await),
            tool::FIND => {
                let bridge = CancelBridge::new(&context.ct);
                respond(g.find(decode(name, args)?, bridge.flag.clone()).await)
            }
            tool::GREP => {
                let bridge = CancelBridge::new(&context.ct);
                respond(g.grep(decode(name, args)?, bridge.flag.clone()).await)
            }
            tool::VERSION => respond(g.version(decode(name, args)?).await),
            tool::APPLY_PATCH => respond(g.apply_patch(decode(name, args)?).await),
            tool::OPERATION_STATUS => respond(g.operation_status(decode(name, args)?).await),
            tool::EXEC_COMMAND => respond(g.exec_command(decode(name, args)?).await),
            tool::WRITE_STDIN => respond(g.write_stdin(decode(name, args)?).await),
            // A wait_ms wait ends when the client cancels the request.
            tool::READ_PROCESS => {
                let result = g.read_process(decode(name, args)?, context.ct.cancelled()).await;
                note_cancelled(&context, name);
                respond(result)
            }
            tool::PROCESS_STATUS => {
                let result = g.process_status(decode(name, args)?, context.ct.cancelled()).await;
                note_cancelled(&context, name);
                respond(result)
            }
            tool::PROCESS_RESIZE => respond(g.process_resize(decode(name, args)?).await),
            tool::TERMINATE_PROCESS => respond(g.terminate_process(decode(name, args)?).await),
            other => Err(McpError::invalid_params(format!("tool not found: {other}"), None)),
        }
    }
}
