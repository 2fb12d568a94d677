//! TODO

pub mod rounded;
pub mod source;
