//! The coordinator's side of the noise: [`manager`] starts, replaces and stops the noise
//! processes of one run, and [`fold`] adds up what each left behind into the run's noise
//! outcome. What runs inside the noise processes is the worker side, `crate::noise`.

mod fold;
mod manager;

pub use manager::find_program;

pub(crate) use manager::NoiseManager;
