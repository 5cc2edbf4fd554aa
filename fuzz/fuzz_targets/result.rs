//! Any bytes as a saved result: loading must give a document or an error, never a panic; a
//! loaded document must also render in every export format (what `rtsoak report` does).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = rtsoak::store::from_bytes(data) {
        for format in rtsoak_report::FORMATS {
            match format.render {
                rtsoak_report::Render::File(render) => drop(render(&doc)),
                rtsoak_report::Render::Directory(render) => drop(render(&doc)),
            }
        }
    }
});
