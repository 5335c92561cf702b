//! JSON values as Python objects: what the library writes as JSON text becomes the dicts,
//! lists, strings and numbers `json.loads` makes of that text.
//!
//! The text is parsed in Rust (`pi_session_json::parse`, JavaScript's `JSON.parse`) and the
//! objects built here, without recursion. Measured against `json.loads` of the same text on
//! 100 MB sessions (README: `bench/convert.py`), this is as fast or faster on the generated
//! realistic session and at most 15 % slower on a long chain of short messages; and
//! `json.loads` recurses, so it gives up (`RecursionError`) on values nested about a thousand
//! deep: every tree of a session longer than that (it is as deep as its longest branch), and
//! hostile messages. Python's cyclic garbage collector is paused while the objects are made
//! (they hold no cycles): it took a third of the time.

use pi_session_format::json::{self, JsObject, JsString, JsValue};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::Failure;

/// How answers become Python objects: [`DIRECT`]; for the benchmark only
/// (`_set_conversion`), `json.loads` ([`LOADS`]) or the JSON text as `bytes` ([`TEXT`]).
pub(crate) static MODE: AtomicU8 = AtomicU8::new(DIRECT);
/// Parsed in Rust, built here.
pub(crate) const DIRECT: u8 = 0;
/// `json.loads` of the text (the benchmark's comparison).
pub(crate) const LOADS: u8 = 1;
/// No objects: the JSON text as `bytes` (what making the text costs).
pub(crate) const TEXT: u8 = 2;

/// Python's cyclic garbage collector, paused while it lives.
struct GcPause<'py> {
    gc: Bound<'py, PyModule>,
    was_enabled: bool,
}

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>) -> PyResult<GcPause<'py>> {
        let gc = py.import("gc")?;
        let was_enabled = gc.call_method0("isenabled")?.is_truthy()?;
        gc.call_method0("disable")?;
        Ok(GcPause { gc, was_enabled })
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if self.was_enabled {
            let _ = self.gc.call_method0("enable");
        }
    }
}

/// The Python value of `text`, one JSON value as the library writes it.
pub(crate) fn from_json(py: Python<'_>, text: Vec<u8>) -> PyResult<Bound<'_, PyAny>> {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == TEXT {
        return Ok(PyBytes::new(py, &text).into_any());
    }
    let _paused = GcPause::new(py)?;
    if mode == LOADS {
        return py
            .import("json")?
            .call_method1("loads", (PyBytes::new(py, &text),));
    }
    let value = py.detach(|| {
        std::str::from_utf8(&text)
            .map_err(|e| e.to_string())
            .and_then(|t| json::parse(t).map_err(|e| e.to_string()))
    });
    let value = value.map_err(|e| Failure::new("internal", e))?;
    let object = to_py(py, &value);
    // Freeing a large value takes a while: not while Python waits.
    if text.len() >= LARGE {
        // Without a thread to be had, the value is freed here (the closure is dropped).
        let _ = std::thread::Builder::new().spawn(move || drop(value));
    }
    object
}

/// Values parsed from this many bytes of text on are freed on a thread of their own.
const LARGE: usize = 1 << 20;

/// A string: UTF-8 as it is; a JavaScript string holding a lone surrogate (WTF-8) as the
/// Python string `json.loads` makes of its `\udXXX` escape.
fn string<'py>(py: Python<'py>, s: &JsString) -> PyResult<Bound<'py, PyAny>> {
    match s.as_str() {
        Some(s) => Ok(PyString::new(py, s).into_any()),
        None => PyBytes::new(py, s.as_wtf8()).call_method1("decode", ("utf-8", "surrogatepass")),
    }
}

/// A number as `json.loads` reads `JSON.stringify`'s text of it: `None` for what is not
/// finite, an `int` for what it writes without a fraction or exponent (beyond 2^53, the
/// digits it writes: `123456789012345680000`), a `float` otherwise.
fn number(py: Python<'_>, n: f64) -> PyResult<Bound<'_, PyAny>> {
    if !n.is_finite() {
        return Ok(py.None().into_bound(py));
    }
    if n.fract() == 0.0 && n.abs() < 1e21 {
        if n.abs() <= 9_007_199_254_740_992.0 {
            return Ok((n as i64).into_pyobject(py)?.into_any());
        }
        let mut digits = Vec::new();
        json::write_number(&mut digits, n);
        let exact = std::str::from_utf8(&digits)
            .ok()
            .and_then(|d| d.parse::<i128>().ok())
            .ok_or_else(|| Failure::new("internal", format!("the number {n} has no digits")))?;
        return Ok(exact.into_pyobject(py)?.into_any());
    }
    Ok(n.into_pyobject(py)?.into_any())
}

/// A container being filled.
enum Open<'v, 'py> {
    List(Bound<'py, PyList>, std::slice::Iter<'v, JsValue>),
    Dict(
        Bound<'py, PyDict>,
        Box<dyn Iterator<Item = (&'v JsString, &'v JsValue)> + 'v>,
    ),
}

/// The Python object of a value, and the container to fill when it is one.
fn node<'v, 'py>(
    py: Python<'py>,
    value: &'v JsValue,
) -> PyResult<(Bound<'py, PyAny>, Option<Open<'v, 'py>>)> {
    Ok(match value {
        JsValue::Null => (py.None().into_bound(py), None),
        JsValue::Bool(b) => (b.into_pyobject(py)?.to_owned().into_any(), None),
        JsValue::Number(n) => (number(py, *n)?, None),
        JsValue::String(s) => (string(py, s)?, None),
        JsValue::Array(a) => {
            let list = PyList::empty(py);
            (list.clone().into_any(), Some(Open::List(list, a.0.iter())))
        }
        JsValue::Object(o) => {
            let dict = PyDict::new(py);
            (dict.clone().into_any(), Some(Open::Dict(dict, members(o))))
        }
    })
}

fn members<'v>(o: &'v JsObject) -> Box<dyn Iterator<Item = (&'v JsString, &'v JsValue)> + 'v> {
    Box::new(o.iter())
}

/// The Python object of `value`, built without recursion (any depth). Object keys are
/// made once per text, as `json.loads` does.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &JsValue) -> PyResult<Bound<'py, PyAny>> {
    let mut keys: FxHashMap<&[u8], Bound<'py, PyAny>> = FxHashMap::default();
    let (root, open) = node(py, value)?;
    let mut stack: Vec<Open<'_, 'py>> = open.into_iter().collect();
    while let Some(top) = stack.last_mut() {
        let next = match top {
            Open::List(list, items) => match items.next() {
                None => None,
                Some(item) => {
                    let (object, open) = node(py, item)?;
                    list.append(object)?;
                    Some(open)
                }
            },
            Open::Dict(dict, members) => match members.next() {
                None => None,
                Some((key, item)) => {
                    let (object, open) = node(py, item)?;
                    let key = match keys.get(key.as_wtf8()) {
                        Some(k) => k.clone(),
                        None => {
                            let k = string(py, key)?;
                            keys.insert(key.as_wtf8(), k.clone());
                            k
                        }
                    };
                    dict.set_item(key, object)?;
                    Some(open)
                }
            },
        };
        match next {
            None => {
                stack.pop();
            }
            Some(Some(open)) => stack.push(open),
            Some(None) => {}
        }
    }
    Ok(root)
}

/// A Python value as a JSON value, through `json.dumps` (insertion order kept, non-ASCII and
/// lone surrogates escaped, `NaN` refused) and JavaScript's `JSON.parse`.
pub(crate) fn to_js(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<JsValue> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    let text: String = py
        .import("json")?
        .call_method("dumps", (object,), Some(&kwargs))?
        .extract()?;
    json::parse(&text).map_err(|e| Failure::new("bad-json", e.to_string()).into())
}
