//! The coordinator's side of the noise: [`manager`] starts, replaces and stops the noise
//! processes of one run, and [`fold`] adds up what each left behind into the run's noise
//! outcome; [`leftovers`] ends what an external command of a killed rtsoak left running. What
//! runs inside the noise processes is the worker side, `crate::noise`.

mod fold;
pub mod leftovers;
mod manager;

pub(crate) use manager::NoiseManager;
