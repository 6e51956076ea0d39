//! A writer's deferred writes, sent as one request.
//!
//! `tokio-postgres` ends every statement it sends with its own `Sync`, and
//! PostgreSQL answers each `Sync` in a packet of its own: a job's three to
//! five deferred writes came back as three to five packets, each waking
//! the writer's thread (on a VM, a halted vCPU's wake costs more than the
//! statement). So the writer's deferred writes are kept as text, each an
//! `EXECUTE` of a statement this connection prepared with `PREPARE` (once
//! per statement), and leave as one simple-protocol request (one `Query`
//! message, answered in one packet) just before the next request of any
//! kind: they still run in the order sent, before it, and fail as before
//! (the first failure aborts the transaction, so the rest of the request
//! is skipped and the job's savepoint is what the writer rolls back to).
//!
//! Values are written as literals only for the types whose text form is
//! exact and simple to quote: text (the JSON documents are stored as
//! text), whole numbers and booleans. A string is an escape string (`E'...'`, every `\` and `'` doubled), whose
//! meaning does not depend on `standard_conforming_strings`; a string
//! holding U+0000, or a statement with a value of any other type, is sent
//! bound as before (ending the batch first, so the order holds).

use std::cell::RefCell;
use std::collections::HashMap;

use bytes::BytesMut;
use tokio_postgres::types::{IsNull, ToSql, Type};

/// The most statements a connection prepares for its batches: the writes
/// are a few dozen fixed statements, so reaching it means something varies
/// that should not (and the rest are bound as before).
const MOST_PREPARED: usize = 256;

/// The deferred writes of one connection not sent yet, and the names of the
/// statements it prepared for them.
#[derive(Default)]
pub(super) struct Batch {
    text: RefCell<String>,
    prepared: RefCell<HashMap<String, String>>,
}

impl Batch {
    /// The name `sql` was prepared under on this connection, if it was.
    pub fn name(&self, sql: &str) -> Option<String> {
        self.prepared.borrow().get(sql).cloned()
    }

    /// A new name for `sql` and the `PREPARE` that gives it that name, for
    /// parameters of the types `params`; `None` if one of them is not a
    /// built-in type, or [`MOST_PREPARED`] were. The name is kept once [`Batch::prepared`] says the
    /// `PREPARE` succeeded.
    pub fn prepare(&self, sql: &str, params: &[Type]) -> Option<(String, String)> {
        if self.prepared.borrow().len() >= MOST_PREPARED {
            return None;
        }
        let name = format!("gatehouse_write_{}", self.prepared.borrow().len());
        let types = params
            .iter()
            .map(|ty| (ty.schema() == "pg_catalog").then(|| format!("pg_catalog.{}", ty.name())))
            .collect::<Option<Vec<_>>>()?;
        let prepare = if types.is_empty() {
            format!("PREPARE {name} AS {sql}")
        } else {
            format!("PREPARE {name} ({}) AS {sql}", types.join(", "))
        };
        Some((name, prepare))
    }

    /// Keeps `name` as what `sql` was prepared under.
    pub fn prepared(&self, sql: &str, name: String) {
        self.prepared.borrow_mut().insert(sql.to_owned(), name);
    }

    /// Adds `EXECUTE name(values)`.
    pub fn execute(&self, name: &str, values: &[String]) {
        let mut text = self.text.borrow_mut();
        text.push_str("EXECUTE ");
        text.push_str(name);
        if !values.is_empty() {
            text.push('(');
            text.push_str(&values.join(", "));
            text.push(')');
        }
        text.push(';');
    }

    /// Adds statements without parameters.
    pub fn statements(&self, sql: &str) {
        let mut text = self.text.borrow_mut();
        text.push_str(sql);
        text.push(';');
    }

    /// What to send, if anything; the batch is empty after.
    pub fn take(&self) -> Option<String> {
        let text = std::mem::take(&mut *self.text.borrow_mut());
        (!text.is_empty()).then_some(text)
    }
}

/// Each of `params` as a literal of its type in `types`; `None` if one of
/// them cannot be written as one (see the module's doc).
pub(super) fn literals(params: &[Box<dyn ToSql + Sync + Send>], types: &[Type]) -> Option<Vec<String>> {
    if params.len() != types.len() {
        return None;
    }
    params.iter().zip(types).map(|(param, ty)| literal(param.as_ref(), ty)).collect()
}

/// `value`, of type `ty`, as a literal; `None` when it cannot be written as one.
fn literal(value: &(dyn ToSql + Sync + Send), ty: &Type) -> Option<String> {
    let mut bytes = BytesMut::new();
    // The binary form the driver would have bound, read back.
    if let IsNull::Yes = value.to_sql_checked(ty, &mut bytes).ok()? {
        return Some("NULL".to_owned());
    }
    let bytes = &bytes[..];
    let text = |bytes: &[u8]| std::str::from_utf8(bytes).ok().and_then(escape_string);
    match *ty {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => text(bytes),
        Type::INT8 => Some(i64::from_be_bytes(bytes.try_into().ok()?).to_string()),
        Type::INT4 => Some(i32::from_be_bytes(bytes.try_into().ok()?).to_string()),
        Type::INT2 => Some(i16::from_be_bytes(bytes.try_into().ok()?).to_string()),
        Type::BOOL => match bytes {
            [0] => Some("false".to_owned()),
            [1] => Some("true".to_owned()),
            _ => None,
        },
        _ => None,
    }
}

/// `text` as an escape string constant; `None` if it holds U+0000, which
/// no PostgreSQL string can.
fn escape_string(text: &str) -> Option<String> {
    if text.contains('\0') {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 3);
    out.push_str("E'");
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("''"),
            c => out.push(c),
        }
    }
    out.push('\'');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(value: impl ToSql + Sync + Send + 'static, ty: Type) -> Option<String> {
        literals(&[Box::new(value)], &[ty]).map(|mut v| v.remove(0))
    }

    #[test]
    fn a_string_is_an_escape_string_with_its_quotes_and_backslashes_doubled() {
        assert_eq!(one("plain", Type::TEXT).as_deref(), Some("E'plain'"));
        assert_eq!(one("it's".to_owned(), Type::TEXT).as_deref(), Some("E'it''s'"));
        assert_eq!(one(r"C:\dir\'x".to_owned(), Type::TEXT).as_deref(), Some(r"E'C:\\dir\\''x'"));
        assert_eq!(one("'); DROP TABLE gates; --", Type::TEXT).as_deref(), Some("E'''); DROP TABLE gates; --'"));
        assert_eq!(one("é $1 \n ✓", Type::VARCHAR).as_deref(), Some("E'é $1 \n ✓'"));
    }

    #[test]
    fn a_string_holding_nul_or_a_value_of_another_type_is_not_written_as_a_literal() {
        assert_eq!(one("a\0b", Type::TEXT), None);
        assert_eq!(one(1.5f64, Type::FLOAT8), None);
        assert_eq!(one(vec!["a".to_owned()], Type::TEXT_ARRAY), None);
        // A value the type cannot take is left to the driver to refuse.
        assert_eq!(one(7i64, Type::TEXT), None);
        // One value that cannot be written keeps the whole statement bound.
        let params: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new("a"), Box::new(1.5f64)];
        assert_eq!(literals(&params, &[Type::TEXT, Type::FLOAT8]), None);
        assert_eq!(literals(&params[..1], &[Type::TEXT, Type::TEXT]), None);
    }

    #[test]
    fn numbers_booleans_and_null_are_written_as_postgresql_reads_them() {
        assert_eq!(one(-9_007_199_254_740_993i64, Type::INT8).as_deref(), Some("-9007199254740993"));
        assert_eq!(one(42i32, Type::INT4).as_deref(), Some("42"));
        assert_eq!(one(-3i16, Type::INT2).as_deref(), Some("-3"));
        assert_eq!(one(true, Type::BOOL).as_deref(), Some("true"));
        assert_eq!(one(false, Type::BOOL).as_deref(), Some("false"));
        assert_eq!(one(None::<String>, Type::TEXT).as_deref(), Some("NULL"));
        assert_eq!(one(None::<i64>, Type::INT8).as_deref(), Some("NULL"));
    }

    #[test]
    fn a_statement_is_prepared_under_a_new_name_with_its_types_qualified() {
        let batch = Batch::default();
        let (name, prepare) = batch.prepare("UPDATE t SET a = $1 WHERE b = $2", &[Type::TEXT, Type::INT8]).unwrap();
        assert_eq!(name, "gatehouse_write_0");
        assert_eq!(
            prepare,
            "PREPARE gatehouse_write_0 (pg_catalog.text, pg_catalog.int8) AS UPDATE t SET a = $1 WHERE b = $2"
        );
        assert_eq!(batch.name("UPDATE t SET a = $1 WHERE b = $2"), None);
        batch.prepared("UPDATE t SET a = $1 WHERE b = $2", name);
        assert_eq!(batch.name("UPDATE t SET a = $1 WHERE b = $2").as_deref(), Some("gatehouse_write_0"));
        assert_eq!(batch.prepare("SELECT 1", &[]).unwrap().1, "PREPARE gatehouse_write_1 AS SELECT 1");

        batch.execute("gatehouse_write_0", &["E'x'".to_owned(), "NULL".to_owned()]);
        batch.statements("RELEASE job; SAVEPOINT job");
        batch.execute("gatehouse_write_1", &[]);
        assert_eq!(
            batch.take().as_deref(),
            Some("EXECUTE gatehouse_write_0(E'x', NULL);RELEASE job; SAVEPOINT job;EXECUTE gatehouse_write_1;")
        );
        assert_eq!(batch.take(), None);
    }
}
