//! A server's rate limits ([`RateLimits`]): calls in the last minute, per
//! tool and for the whole server, counted on tokio's clock (so tests can
//! pause it). A call over a limit is not made; the error says which limit
//! and when it resets.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use crate::config::RateLimits;
use crate::mcp::error::McpError;

const WINDOW: Duration = Duration::from_secs(60);

/// The calls of one server in the last minute.
#[derive(Debug, Default)]
pub(crate) struct CallWindow {
    server: VecDeque<Instant>,
    tools: HashMap<String, VecDeque<Instant>>,
}

impl CallWindow {
    /// Counts a call of `tool` now, or refuses it when a limit is reached.
    pub(crate) fn admit(&mut self, server: &str, tool: &str, limits: RateLimits) -> Result<(), McpError> {
        let now = Instant::now();
        let calls = self.tools.entry(tool.to_owned()).or_default();
        for queue in [&mut self.server, &mut *calls] {
            while queue.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
                queue.pop_front();
            }
        }
        let over = |queue: &VecDeque<Instant>, limit: Option<u32>| {
            let limit = limit?;
            let oldest = queue.len().checked_sub(limit as usize).map(|i| queue[i])?;
            Some((limit, (oldest + WINDOW).saturating_duration_since(now)))
        };
        let refused = over(calls, limits.per_tool_per_min)
            .map(|(limit, resets_in)| (format!("tool {tool:?}"), limit, resets_in))
            .or_else(|| over(&self.server, limits.per_server_per_min).map(|(l, r)| ("every tool".to_owned(), l, r)));
        if let Some((scope, limit, resets_in)) = refused {
            return Err(McpError::RateLimited { server: server.to_owned(), scope, limit, resets_in });
        }
        calls.push_back(now);
        self.server.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_call_over_a_limit_is_refused_until_the_minute_has_passed() {
        let mut window = CallWindow::default();
        let limits = RateLimits { per_tool_per_min: Some(2), per_server_per_min: Some(3) };
        window.admit("s", "a", limits).unwrap();
        tokio::time::advance(Duration::from_secs(10)).await;
        window.admit("s", "a", limits).unwrap();
        match window.admit("s", "a", limits) {
            Err(McpError::RateLimited { scope, limit: 2, resets_in, .. }) => {
                assert_eq!(scope, "tool \"a\"");
                assert_eq!(resets_in, Duration::from_secs(50));
            }
            other => panic!("expected the tool's limit, got {other:?}"),
        }
        window.admit("s", "b", limits).unwrap();
        let err = window.admit("s", "c", limits).unwrap_err();
        assert!(matches!(&err, McpError::RateLimited { limit: 3, .. }), "{err:?}");
        assert!(err.to_string().contains("resets in 50 s"), "{err}");
        tokio::time::advance(Duration::from_secs(50)).await;
        window.admit("s", "a", limits).unwrap();
    }
}
