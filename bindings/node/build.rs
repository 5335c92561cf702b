//! The linker flags a Node addon needs on each platform (`napi_build::setup`).

fn main() {
    napi_build::setup();
}
