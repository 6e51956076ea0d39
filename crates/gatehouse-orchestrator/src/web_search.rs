//! `web_search(query)` for a team's agents, through the search endpoint the
//! operator configured: a SearXNG-compatible JSON API
//! (`GET {endpoint}?q=QUERY&format=json`, answering
//! `{"results": [{"title", "url", "content"}]}`), which SearXNG itself and
//! most self-hosted search proxies speak. Without an endpoint the tool is
//! not offered. Results are cut to [`MAX_RESULTS`] and each snippet to 300
//! characters; a failure is answered to the model, never raised.

use std::time::Duration;

use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most results given to a model.
pub const MAX_RESULTS: usize = 8;
/// How long a search may take.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// One result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResult {
    /// Its title.
    pub title: String,
    /// Where it is.
    pub url: String,
    /// What it says, cut short.
    pub snippet: String,
}

/// A configured search endpoint.
#[derive(Debug, Clone)]
pub struct WebSearch {
    endpoint: Url,
    http: reqwest::Client,
}

impl WebSearch {
    /// The endpoint at `endpoint` (`https://search.example.com/search`).
    pub fn new(endpoint: &str) -> Result<Self, String> {
        let endpoint =
            Url::parse(endpoint).map_err(|e| format!("the search endpoint `{endpoint}` is not a URL: {e}"))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(format!("the search endpoint `{endpoint}` must be http or https"));
        }
        let http = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| format!("the search client could not be made: {e}"))?;
        Ok(Self { endpoint, http })
    }

    /// Searches for `query`: the results, or what went wrong, worded for the model.
    pub async fn search(&self, query: &str) -> Result<Vec<SearchResult>, String> {
        let query = query.trim();
        if query.is_empty() {
            return Err("`query` is required: what to search for".to_owned());
        }
        let mut url = self.endpoint.clone();
        url.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
        let response = self.http.get(url).send().await.map_err(|e| {
            if e.is_timeout() {
                format!("the search did not answer within {} s; try again later", TIMEOUT.as_secs())
            } else {
                "the search endpoint could not be reached; try again later".to_owned()
            }
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("the search endpoint answered HTTP {}; try again later", status.as_u16()));
        }
        let body: Value =
            response.json().await.map_err(|_| "the search endpoint answered something that is not JSON".to_owned())?;
        let results = body["results"].as_array().ok_or("the search endpoint's answer has no `results` list")?;
        Ok(results
            .iter()
            .filter_map(|r| {
                let url = r["url"].as_str()?.to_owned();
                Some(SearchResult {
                    title: r["title"].as_str().unwrap_or(&url).trim().to_owned(),
                    snippet: r["content"].as_str().unwrap_or_default().trim().chars().take(300).collect(),
                    url,
                })
            })
            .take(MAX_RESULTS)
            .collect())
    }
}

/// Results as the model reads them: one numbered entry each.
pub fn for_model(query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("No results for `{query}`.");
    }
    let mut text = format!("Results for `{query}`:\n");
    for (i, r) in results.iter().enumerate() {
        text.push_str(&format!("{}. {} <{}>\n   {}\n", i + 1, r.title, r.url, r.snippet));
    }
    text
}

#[cfg(test)]
mod tests {
    use axum::extract::Query;
    use axum::routing::get;
    use axum::{Json, Router};
    use serde_json::json;
    use std::collections::HashMap;

    use super::*;

    async fn serve(app: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        format!("http://{addr}/search")
    }

    #[tokio::test]
    async fn results_come_from_a_searxng_style_endpoint_cut_to_size() {
        let app = Router::new().route(
            "/search",
            get(|Query(q): Query<HashMap<String, String>>| async move {
                assert_eq!(q.get("format").map(String::as_str), Some("json"));
                let results: Vec<Value> = (0..12)
                    .map(|i| json!({"title": format!("{} {i}", q["q"]), "url": format!("https://e.com/{i}"), "content": "x".repeat(400)}))
                    .chain([json!({"title": "no url"})])
                    .collect();
                Json(json!({"results": results}))
            }),
        );
        let search = WebSearch::new(&serve(app).await).unwrap();
        let results = search.search(" rust serde ").await.unwrap();
        assert_eq!(results.len(), MAX_RESULTS);
        assert_eq!(results[0].title, "rust serde 0");
        assert_eq!(results[0].snippet.chars().count(), 300);
        let text = for_model("rust serde", &results[..1]);
        assert!(text.starts_with("Results for `rust serde`:\n1. rust serde 0 <https://e.com/0>"), "{text}");
        assert_eq!(for_model("nothing", &[]), "No results for `nothing`.");
    }

    #[tokio::test]
    async fn failures_are_answered_for_the_model() {
        let app = Router::new()
            .route("/search", get(|| async { (axum::http::StatusCode::BAD_GATEWAY, "down") }))
            .route("/plain", get(|| async { "not json" }));
        let base = serve(app).await;
        let search = WebSearch::new(&base).unwrap();
        assert_eq!(search.search("q").await.unwrap_err(), "the search endpoint answered HTTP 502; try again later");
        assert_eq!(search.search("  ").await.unwrap_err(), "`query` is required: what to search for");
        let plain = WebSearch::new(&base.replace("/search", "/plain")).unwrap();
        assert_eq!(plain.search("q").await.unwrap_err(), "the search endpoint answered something that is not JSON");
        let nowhere = WebSearch::new("http://127.0.0.1:9/search").unwrap();
        assert!(nowhere.search("q").await.unwrap_err().contains("could not be reached"));
        assert!(WebSearch::new("ftp://x").unwrap_err().contains("http or https"));
    }
}
