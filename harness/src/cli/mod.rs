//! Arguments of each subcommand, and how each runs. Only this layer prints.

pub mod admit;
pub mod certify;
pub mod check;
pub mod fuzz;
pub mod guard;
pub mod lint;
pub mod mutate;
pub mod validate;
