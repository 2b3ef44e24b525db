//! `jobq worker --handler TYPE=TARGET`: a handler from the command line, so that a worker can start
//! without a config file, or add to (and override) the handlers of one.
//!
//! The target says the handler's kind the way a config entry would: a program (with arguments,
//! split as a shell would), `persistent:PROGRAM`, `builtin:NAME`, an `http://` or `https://` URL, or
//! an `amqp://`, `amqps://` or `kafka://` target to publish to. A flag becomes the same
//! [`HandlerFile`] a `[handlers."TYPE"]` table is read into, and is resolved by the same code, so
//! a flag and a table can never disagree about what is valid.

use std::path::Path;

use jobq::handler::HandlerKind;

use super::{Config, HandlerFile, handler_config};

/// One `--handler` flag, read but not yet resolved (its program is resolved against the folder the
/// worker started in, and its retry policy against the config's, each time the config is loaded).
#[derive(Debug, Clone)]
pub struct HandlerFlag {
    job_type: String,
    entry: HandlerFile,
}

/// The schemes a target may name; anything else that looks like a scheme is refused rather than
/// taken for a program.
const SCHEMES: &str = "a program, persistent:PROGRAM, builtin:NAME, http(s)://, amqp(s):// or kafka://";

impl HandlerFlag {
    /// Reads `TYPE=TARGET`. The error is one line, for clap to print after the flag's name.
    pub fn parse(text: &str) -> Result<HandlerFlag, String> {
        let Some((job_type, target)) = text.split_once('=') else {
            return Err(format!(
                "expected TYPE=TARGET, such as mail.send=./bin/send-mail or noop=builtin:noop, got {text:?}"
            ));
        };
        let (job_type, target) = (job_type.trim(), target.trim());
        if job_type.is_empty() {
            return Err(format!("the job type before = is empty in {text:?}"));
        }
        if target.is_empty() {
            return Err(format!("the target after = is empty in {text:?} (expected {SCHEMES})"));
        }
        let mut entry = HandlerFile::default();
        if let Some(name) = target.strip_prefix("builtin:") {
            entry.builtin = Some(name.to_string());
        } else if let Some(command) = target.strip_prefix("persistent:") {
            entry.exec = Some(argv(command)?);
            entry.persistent = Some(true);
        } else if ["http://", "https://"].iter().any(|s| target.starts_with(s)) {
            entry.http = Some(target.to_string());
        } else if ["amqp://", "amqps://", "kafka://"]
            .iter()
            .any(|s| target.starts_with(s))
        {
            entry.publish = Some(target.to_string());
        } else if let Some(scheme) = scheme_of(target) {
            return Err(format!("unknown scheme {scheme:?} in {text:?} (expected {SCHEMES})"));
        } else {
            entry.exec = Some(argv(target)?);
        }
        Ok(HandlerFlag {
            job_type: job_type.to_string(),
            entry,
        })
    }

    /// The job type it handles (`*` for every type without its own).
    pub fn job_type(&self) -> &str {
        &self.job_type
    }
}

/// A program and its arguments, split as a shell would split them (quotes keep spaces).
fn argv(command: &str) -> Result<Vec<String>, String> {
    match shlex::split(command) {
        Some(argv) if !argv.is_empty() => Ok(argv),
        _ => Err(format!("cannot read the command {command:?} (an unclosed quote?)")),
    }
}

/// The scheme a target starts with (`ftp` in `ftp://x`, `foo` in `foo:bar`), if it has one. A path
/// (`./bin/x`, `/usr/bin/x`) never does.
fn scheme_of(target: &str) -> Option<&str> {
    let (scheme, _) = target.split_once(':')?;
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    (starts_with_letter && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))).then_some(scheme)
}

impl Config {
    /// Adds the handlers of `--handler` flags, replacing the file's for the same types. Programs named
    /// with a path resolve against `base` (the folder the worker started in).
    pub fn with_handler_flags(mut self, flags: &[HandlerFlag], base: &Path) -> jobq::Result<Config> {
        for flag in flags {
            let refused = |reason: String| jobq::Error::config(format!("--handler {:?}: {reason}", flag.job_type));
            let handler = handler_config(&flag.job_type, flag.entry.clone(), base, self.retry).map_err(refused)?;
            // As the worker would at start, but naming the flag rather than a table of the file.
            if let HandlerKind::Exec { argv } | HandlerKind::Persistent { argv, .. } = &handler.kind {
                jobq::handler::exec::check_program(&argv[0]).map_err(refused)?;
            }
            self.handlers.insert(flag.job_type.clone(), handler);
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A config read from an empty file.
    fn empty_config() -> Config {
        crate::config::tests::load("", Default::default(), &[]).unwrap()
    }

    fn kind(text: &str) -> HandlerKind {
        let flag = HandlerFlag::parse(text).unwrap();
        let config = empty_config().with_handler_flags(&[flag], Path::new("/bin")).unwrap();
        config.handlers.into_values().next().unwrap().kind
    }

    #[test]
    fn each_target_form_makes_its_kind() {
        assert_eq!(
            kind("mail.send=./sh -c true"),
            HandlerKind::Exec {
                argv: vec!["/bin/sh".into(), "-c".into(), "true".into()]
            }
        );
        assert_eq!(
            kind("*=sh 'my dispatch.sh'"),
            HandlerKind::Exec {
                argv: vec!["sh".into(), "my dispatch.sh".into()]
            }
        );
        assert!(matches!(
            kind("report=persistent:sh report.sh"),
            HandlerKind::Persistent { argv, .. } if argv == ["sh", "report.sh"]
        ));
        assert_eq!(kind("noop=builtin:noop"), HandlerKind::Builtin { name: "noop".into() });
        assert_eq!(
            kind("hook=http://127.0.0.1:8080/jobs"),
            HandlerKind::Http {
                url: "http://127.0.0.1:8080/jobs".into(),
                secret_env: None
            }
        );
        assert!(matches!(
            kind("out=kafka://127.0.0.1:9092/orders"),
            HandlerKind::Custom(c) if c.factory().name() == "publish"
        ));
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        for (text, says) in [
            ("mail.send", "expected TYPE=TARGET"),
            ("=./bin/x", "job type before = is empty"),
            ("x=", "target after = is empty"),
            ("x=ftp://host/file", "unknown scheme \"ftp\""),
            ("x=builtn:noop", "unknown scheme \"builtn\""),
            ("x=./run 'unclosed", "unclosed quote"),
        ] {
            let e = HandlerFlag::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        // Well-formed, but not a valid handler: refused when resolved, naming the flag's type.
        let flag = HandlerFlag::parse("x=builtin:nope").unwrap();
        let e = empty_config()
            .with_handler_flags(&[flag], Path::new("/"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--handler \"x\"") && e.contains("unknown builtin"), "{e}");
    }

    #[test]
    fn paths_are_programs_even_with_a_colon() {
        assert_eq!(scheme_of("./bin/a:b"), None);
        assert_eq!(scheme_of("/usr/bin/x"), None);
        assert_eq!(scheme_of("send-mail"), None);
        assert_eq!(scheme_of("c++:x"), Some("c++"));
    }
}
