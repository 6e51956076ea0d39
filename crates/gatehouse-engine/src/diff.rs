//! Payload diffs: what a reviewer changed in an agent's proposal, as field
//! changes (JSON pointers with old and new values, so an edit can be undone
//! exactly) and as a unified text diff computed with `similar` for display.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use similar::TextDiff;

/// What happened to one field.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeOp {
    /// The field is new.
    Added,
    /// The field is gone.
    Removed,
    /// The field has another value.
    Changed,
}

/// One changed field, addressed by JSON pointer (`/args/branch`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    /// JSON pointer of the field; empty for the whole document.
    pub path: String,
    /// Added, removed or changed.
    pub op: ChangeOp,
    /// The value before, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old: Option<Value>,
    /// The value after, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<Value>,
}

/// The difference between two JSON documents.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PayloadDiff {
    /// Field by field, in document order.
    pub changes: Vec<FieldChange>,
    /// Unified diff of the pretty-printed documents.
    pub unified: String,
}

impl PayloadDiff {
    /// Whether the documents are equal.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Recovers the original from the edited document: the undo of an edit.
    pub fn undo(&self, edited: &Value) -> Value {
        let mut doc = edited.clone();
        for change in self.changes.iter().rev() {
            set_pointer(&mut doc, &change.path, change.old.clone());
        }
        doc
    }

    /// Re-applies the edit to the original document.
    pub fn apply(&self, original: &Value) -> Value {
        let mut doc = original.clone();
        for change in &self.changes {
            set_pointer(&mut doc, &change.path, change.new.clone());
        }
        doc
    }
}

/// Diffs `old` against `new`.
pub fn diff_values(old: &Value, new: &Value) -> PayloadDiff {
    let mut changes = Vec::new();
    walk(old, new, &mut String::new(), &mut changes);
    let unified = if changes.is_empty() {
        String::new()
    } else {
        let (a, b) = (pretty(old), pretty(new));
        TextDiff::from_lines(&a, &b).unified_diff().context_radius(3).header("proposed", "edited").to_string()
    };
    PayloadDiff { changes, unified }
}

/// How many fields differ, for the `payload_changes_max` threshold.
pub fn count_changes(old: &Value, new: &Value) -> u32 {
    let mut changes = Vec::new();
    walk(old, new, &mut String::new(), &mut changes);
    u32::try_from(changes.len()).unwrap_or(u32::MAX)
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn walk(old: &Value, new: &Value, path: &mut String, out: &mut Vec<FieldChange>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, va) in a {
                let len = path.len();
                push_segment(path, key);
                match b.get(key) {
                    Some(vb) => walk(va, vb, path, out),
                    None => out.push(FieldChange {
                        path: path.clone(),
                        op: ChangeOp::Removed,
                        old: Some(va.clone()),
                        new: None,
                    }),
                }
                path.truncate(len);
            }
            for (key, vb) in b {
                if !a.contains_key(key) {
                    let len = path.len();
                    push_segment(path, key);
                    out.push(FieldChange { path: path.clone(), op: ChangeOp::Added, old: None, new: Some(vb.clone()) });
                    path.truncate(len);
                }
            }
        }
        // Arrays of equal length are compared element-wise; otherwise the
        // whole array is one change, which keeps undo exact without an
        // edit-script over indices.
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                push_segment(path, &i.to_string());
                walk(va, vb, path, out);
                path.truncate(len);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(FieldChange {
            path: path.clone(),
            op: ChangeOp::Changed,
            old: Some(a.clone()),
            new: Some(b.clone()),
        }),
    }
}

fn push_segment(path: &mut String, key: &str) {
    path.push('/');
    path.push_str(&key.replace('~', "~0").replace('/', "~1"));
}

/// Sets (or with `None` removes) the value at `pointer`, creating objects on the way.
fn set_pointer(doc: &mut Value, pointer: &str, value: Option<Value>) {
    if pointer.is_empty() {
        *doc = value.unwrap_or(Value::Null);
        return;
    }
    let segments: Vec<String> = pointer.split('/').skip(1).map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut cur = doc;
    for seg in parents {
        cur = match cur {
            Value::Object(map) => map.entry(seg.clone()).or_insert(Value::Null),
            Value::Array(items) => match seg.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                Some(item) => item,
                None => return,
            },
            _ => return,
        };
        if cur.is_null() {
            *cur = Value::Object(Default::default());
        }
    }
    match (cur, value) {
        (Value::Object(map), Some(v)) => {
            map.insert(last.clone(), v);
        }
        (Value::Object(map), None) => {
            map.shift_remove(last);
        }
        (Value::Array(items), Some(v)) => {
            if let Some(slot) = last.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *slot = v;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn field_changes_name_added_removed_and_changed_fields() {
        let old = json!({"prompt": "a cat", "steps": 20, "seed": 1});
        let new = json!({"prompt": "a dog", "steps": 20, "width": 512});
        let d = diff_values(&old, &new);
        let ops: Vec<_> = d.changes.iter().map(|c| (c.path.as_str(), c.op)).collect();
        assert_eq!(
            ops,
            vec![("/prompt", ChangeOp::Changed), ("/seed", ChangeOp::Removed), ("/width", ChangeOp::Added)]
        );
        assert!(d.unified.contains("-  \"prompt\": \"a cat\""), "{}", d.unified);
        assert!(d.unified.contains("+  \"prompt\": \"a dog\""));
    }

    #[test]
    fn undo_recovers_the_original_and_apply_recovers_the_edit() {
        let old = json!({"a": {"b": [1, 2, 3], "c/d": "x"}, "list": [1], "gone": true});
        let new = json!({"a": {"b": [1, 5, 3], "c/d": "y", "e": null}, "list": [1, 2]});
        let d = diff_values(&old, &new);
        assert_eq!(d.undo(&new), old);
        assert_eq!(d.apply(&old), new);
    }

    #[test]
    fn equal_documents_have_an_empty_diff() {
        let v = json!({"x": [1, {"y": 2}]});
        let d = diff_values(&v, &v);
        assert!(d.is_empty());
        assert!(d.unified.is_empty());
        assert_eq!(count_changes(&v, &json!({"x": [1, {"y": 3}]})), 1);
    }

    #[test]
    fn a_scalar_replaced_by_another_type_is_one_change_at_the_root() {
        let d = diff_values(&json!("text"), &json!({"k": 1}));
        assert_eq!(d.changes.len(), 1);
        assert_eq!(d.changes[0].path, "");
        assert_eq!(d.undo(&json!({"k": 1})), json!("text"));
    }
}
