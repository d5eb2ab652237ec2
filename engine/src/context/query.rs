//! Queries and conditional rendering (context.rst "Queries",
//! "Conditional Rendering").

use bevy_ecs::component::Component;
use ferropipe_components::enums::{QueryType, RenderCondMode};

use super::{Context, Handle};
use crate::error::{Error, Result};

/// A query object entity.
#[derive(Component, Debug, Clone)]
pub struct QueryObject {
    pub query_type: QueryType,
    pub index: u32,
}

/// Handle to a query object.
pub type QueryHandle = Handle<QueryObject>;

/// `union pipe_query_result`, in the shape each query type returns.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    /// Counters and timestamps.
    U64(u64),
    /// Predicates.
    Bool(bool),
    /// `PIPE_QUERY_SO_STATISTICS`: (primitives emitted, storage needed).
    SoStatistics {
        num_primitives_written: u64,
        primitives_storage_needed: u64,
    },
    /// `PIPE_QUERY_TIMESTAMP_DISJOINT`: (frequency in Hz, disjoint).
    TimestampDisjoint { frequency: u64, disjoint: bool },
    /// `PIPE_QUERY_PIPELINE_STATISTICS`: the 11 counters in
    /// `pipe_query_data_pipeline_statistics` order.
    PipelineStatistics([u64; 11]),
}

impl Context {
    /// `create_query`.
    pub fn create_query(&mut self, query_type: QueryType, index: u32) -> Result<QueryHandle> {
        let _ = (query_type, index);
        Err(Error::unsupported("create_query", "queries"))
    }

    /// `destroy_query`.
    pub fn destroy_query(&mut self, query: QueryHandle) -> Result<()> {
        self.despawn("destroy_query", query)
    }

    /// `begin_query`: resets the result and starts counting.
    pub fn begin_query(&mut self, query: QueryHandle) -> Result<()> {
        let _ = query;
        Err(Error::unsupported("begin_query", "queries"))
    }

    /// `end_query`.
    pub fn end_query(&mut self, query: QueryHandle) -> Result<()> {
        let _ = query;
        Err(Error::unsupported("end_query", "queries"))
    }

    /// `get_query_result`: `Ok(None)` when `wait` is false and the result
    /// is not ready.
    pub fn get_query_result(
        &mut self,
        query: QueryHandle,
        wait: bool,
    ) -> Result<Option<QueryResult>> {
        let _ = (query, wait);
        Err(Error::unsupported("get_query_result", "queries"))
    }

    /// `render_condition`; `None` disables conditional rendering.
    pub fn render_condition(
        &mut self,
        query: Option<QueryHandle>,
        condition: bool,
        mode: RenderCondMode,
    ) -> Result<()> {
        let _ = (query, condition, mode);
        Err(Error::unsupported(
            "render_condition",
            "conditional rendering",
        ))
    }
}
