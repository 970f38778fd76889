//! The batch runner shared by replay, compare, check and sweep: sessions through
//! policies in parallel (`many`), or streamed file group by file group (`stream`),
//! each session scored while it is in memory, and the run's results as one value.

pub mod many;
pub mod results;
pub mod shard;
pub mod stream;

pub use many::{Prepared, Progress, SessionResults, evaluate_results, replay_many, replay_many_scored};
pub use shard::{InputList, Shard};
pub use stream::{Prepare, SessionKey, Stages, StreamProgress, Streamed, replay_stream};
