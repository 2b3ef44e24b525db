//! [`Stmt`]: a statement written once for every SQL store, its text with each database's placeholders
//! and the values it binds. It keeps the values until it runs: only then are they encoded for the
//! database at hand (with an argument buffer that lives exactly as long as the statement's text, which
//! a statement built generically over sqlx's databases needs).

use super::Dialect;
use crate::store::JobFilter;

/// One value a shared statement binds.
#[derive(Debug, Clone)]
pub(crate) enum Bind {
    /// Text.
    Text(String),
    /// A 64-bit integer (times, counts).
    Int(i64),
    /// A 32-bit integer (`INTEGER` columns: versions, attempts).
    Int32(i32),
    /// Text or NULL.
    OptText(Option<String>),
    /// A 64-bit integer or NULL.
    OptInt(Option<i64>),
}

impl From<Option<String>> for Bind {
    fn from(v: Option<String>) -> Bind {
        Bind::OptText(v)
    }
}

impl From<Option<i64>> for Bind {
    fn from(v: Option<i64>) -> Bind {
        Bind::OptInt(v)
    }
}

impl From<String> for Bind {
    fn from(v: String) -> Bind {
        Bind::Text(v)
    }
}

impl From<&str> for Bind {
    fn from(v: &str) -> Bind {
        Bind::Text(v.to_string())
    }
}

impl From<i64> for Bind {
    fn from(v: i64) -> Bind {
        Bind::Int(v)
    }
}

impl From<i32> for Bind {
    fn from(v: i32) -> Bind {
        Bind::Int32(v)
    }
}

/// A statement under construction: text pushed as it is, values pushed as placeholders.
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    pub(super) sql: String,
    pub(super) binds: Vec<Bind>,
    /// `$1, $2, …` (PostgreSQL) rather than `?`.
    numbered: bool,
    /// Whether the server keeps it prepared: for texts that repeat (not those built from a filter).
    pub(super) kept: bool,
}

impl Stmt {
    /// A statement for `dialect`'s database starting with `sql`.
    pub fn new(dialect: &Dialect, sql: impl Into<String>) -> Stmt {
        Stmt {
            sql: sql.into(),
            binds: Vec::new(),
            numbered: dialect.numbered_placeholders,
            kept: false,
        }
    }

    /// Appends text.
    pub fn push(&mut self, sql: &str) -> &mut Stmt {
        self.sql.push_str(sql);
        self
    }

    /// Appends a placeholder for `value`.
    pub fn bind(&mut self, value: impl Into<Bind>) -> &mut Stmt {
        self.binds.push(value.into());
        if self.numbered {
            self.sql.push('$');
            self.sql.push_str(&self.binds.len().to_string());
        } else {
            self.sql.push('?');
        }
        self
    }

    /// The text, with its placeholders.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The values, in placeholder order.
    pub fn binds(&self) -> &[Bind] {
        &self.binds
    }

    /// Keeps the statement prepared on its connection: its text does not depend on its input.
    pub fn keep(&mut self) -> &mut Stmt {
        self.kept = true;
        self
    }

    /// Appends ` AND column IN (…)` for `values`; nothing when there are none (no condition, so a
    /// caller for which an empty list must match nothing checks for that first).
    pub fn any_of(&mut self, column: &str, values: impl IntoIterator<Item = String>) -> &mut Stmt {
        let mut values = values.into_iter().peekable();
        if values.peek().is_none() {
            return self;
        }
        self.push(&format!(" AND {column} IN "));
        self.list(values)
    }

    /// Appends `(…)`, one placeholder bound to each of `values`, as the right side of an `IN`.
    pub fn list(&mut self, values: impl IntoIterator<Item = String>) -> &mut Stmt {
        self.push("(");
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.bind(v);
        }
        self.push(")")
    }

    /// Appends `AND …` conditions for a filter on the columns of `jobq_jobs` under the name `table`.
    pub fn filter(&mut self, table: &str, filter: &JobFilter) -> &mut Stmt {
        self.any_of(&format!("{table}.queue"), filter.queues.iter().cloned());
        self.any_of(&format!("{table}.job_type"), filter.job_types.iter().cloned());
        let statuses = filter.statuses.iter().map(|s| s.as_str().to_string());
        self.any_of(&format!("{table}.status"), statuses);
        if let Some(since) = filter.created_since {
            self.push(&format!(" AND {table}.created_at >= ")).bind(since.0);
        }
        if let Some(until) = filter.created_until {
            self.push(&format!(" AND {table}.created_at < ")).bind(until.0);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sql::dialect::tests::dialect;

    #[test]
    fn placeholders_follow_the_dialect() {
        let mut d = dialect();
        let mut s = Stmt::new(&d, "SELECT 1 WHERE a = ");
        s.bind(1i64).push(" AND b = ").bind("x");
        assert_eq!(s.sql, "SELECT 1 WHERE a = ? AND b = ?");
        d.numbered_placeholders = true;
        let mut s = Stmt::new(&d, "WHERE 1 = 1");
        s.any_of("q", ["a".to_string(), "b".to_string()])
            .any_of("t", Vec::new());
        assert_eq!(s.sql, "WHERE 1 = 1 AND q IN ($1, $2)");
        assert_eq!(s.binds.len(), 2);
        s.push(" AND id IN ").list(["c".to_string()]);
        assert_eq!(s.sql, "WHERE 1 = 1 AND q IN ($1, $2) AND id IN ($3)");
    }
}
