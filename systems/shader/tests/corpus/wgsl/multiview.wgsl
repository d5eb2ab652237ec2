@fragment
fn main(@builtin(view_index) view_index: i32) {}
