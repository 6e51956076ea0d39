//! The HITL run API's `GET /providers`: the providers Gatehouse can drive
//! and their mapped tools, for any caller, and the operator's team tools
//! with, for people, why the file's tools were left out if they were.

use axum::extract::State;
use axum::Json;
use gatehouse_engine::TokenRole;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::state::AppState;

/// This module's routes.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(providers))
}

/// A tool a provider runs.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProviderTool {
    /// Its name, as `run_input.tool` gives it (`openai:gpt-4o-mini`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The provider's model id.
    pub model: String,
}

/// A model provider and the tools mapped to it.
#[derive(Debug, Serialize, ToSchema)]
pub struct Provider {
    /// The provider's name (`replicate`, `openai`...).
    pub name: String,
    /// Its wire protocol: `openai_compatible`, `anthropic`, `replicate` or `scripted`.
    pub kind: String,
    /// Where it sends requests (never a key); none for the scripted provider.
    pub endpoint: Option<String>,
    /// The names of the tools it serves.
    pub tools: Vec<String>,
    /// The same tools, described.
    pub tool_details: Vec<ProviderTool>,
}

/// The operator's tools for team runs (`--team-tools FILE`).
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamToolsStatus {
    /// The tools a team's agents may be granted, by name.
    pub tools: Vec<String>,
    /// Why the file's tools were left out (the desktop app starts without
    /// them): the file and the line or field at fault. Shown to reviewers
    /// and admins; always absent for an agent's token.
    pub not_loaded: Option<String>,
}

/// The providers Gatehouse orchestrates.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProvidersResponse {
    /// The scripted demo provider first, then each configured one
    /// (`GATEHOUSE_OPENAI_*`, `GATEHOUSE_ANTHROPIC_*`, `GATEHOUSE_REPLICATE_*`).
    pub providers: Vec<Provider>,
    /// The operator's team tools; absent when the server has none.
    pub team_tools: Option<TeamToolsStatus>,
}

/// Available providers and their mapped tools.
#[utoipa::path(get, path = "/providers", tag = "hitl", responses((status = 200, body = ProvidersResponse)))]
pub async fn providers(State(state): State<AppState>, caller: Caller) -> Json<ProvidersResponse> {
    let providers = state
        .orchestrator
        .registry()
        .listing()
        .into_iter()
        .map(|p| Provider {
            name: p.name,
            kind: p.kind.to_string(),
            endpoint: p.endpoint,
            tools: p.tools.iter().map(|t| t.name.clone()).collect(),
            tool_details: p
                .tools
                .into_iter()
                .map(|t| ProviderTool { name: t.name, description: t.description, model: t.model })
                .collect(),
        })
        .collect();
    let person = caller.role != TokenRole::Agent;
    let team_tools = state.orchestrator.toolbox().map(|toolbox| TeamToolsStatus {
        tools: toolbox.signatures().into_iter().map(|s| s.name).collect(),
        not_loaded: toolbox.problem().filter(|_| person).map(str::to_owned),
    });
    Json(ProvidersResponse { providers, team_tools })
}
