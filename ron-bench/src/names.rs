//! How lock and policy names are matched: the one key that command-line
//! names, type names and aliases are compared by.

/// The matching key of a name: lower case, generic parameters dropped,
/// only letters and digits kept (`NxtRon<16>` and `nxt-ron` -> `nxtron`).
pub fn name_key(name: &str) -> String {
    let base = name.trim().split('<').next().unwrap_or("");
    base.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}
