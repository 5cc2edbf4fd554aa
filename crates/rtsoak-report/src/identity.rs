//! Who measured: the names every export gives the machine a result comes from, so a fleet's
//! results can be told apart and split by board, kernel and profile.

use rtsoak_record::HostFacts;

/// The board, as the result's host facts name it: the device tree's model, else its most
/// specific compatible string, else the CPU model (`unknown` where none was read).
pub(crate) fn board(host: &HostFacts) -> String {
    let device_tree = host
        .board
        .as_ref()
        .and_then(|b| b.model.clone().or_else(|| b.compatible.first().cloned()));
    device_tree
        .or_else(|| host.cpu_model.clone())
        .clone()
        .filter(|model| !model.trim().is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// The host's name as an id part: the hostname's letters, digits, `-` and `.` kept, anything
/// else `_` (`unknown` where none was read), so two boards never share an id.
pub(crate) fn host_id(host: &HostFacts) -> String {
    let name = host.hostname.as_deref().unwrap_or("").trim();
    if name.is_empty() {
        return "unknown".to_string();
    }
    rtsoak_record::text::restricted(name, &['-', '.'])
}
