//! Helpers shared by Patchbay's tests: where the real MCP peers are installed,
//! and (added by the areas that need them) scripted model servers and hostile
//! MCP servers.

pub mod discover;
pub mod hostile;
pub mod hub;
pub mod links;
pub mod peers;
pub mod processes;
pub mod proxy;
pub mod scripted;
pub mod signing;
