//! `jobq serve`: the HTTP admin API (`serve/`) until SIGTERM or ctrl-c, then a graceful stop.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::Context;
use super::worker::{LogFormat, init_logging_with};
use crate::config::parse_listen;
use crate::serve::{self, Options, Tls, Tokens};
use jobq::error::Input;
use jobq::time::parse_duration;

/// Arguments of `jobq serve`.
#[derive(Debug, Args)]
#[command(
    after_help = "Tokens come from [serve] tokens in the config, each read from the variable its token_env names.\nWithout tokens it listens on loopback only.\nExamples:\n  jobq serve\n  JOBQ_OPS_TOKEN=… jobq serve --listen 0.0.0.0:8080 --tls-cert cert.pem --tls-key key.pem"
)]
pub struct ServeArgs {
    /// Address to listen on, host:port [default: [serve] listen, else 127.0.0.1:8080]
    // The brackets are --help text naming a config section, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// The private key of --tls-cert (PEM)
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Longest a request may take, its body included
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub request_timeout: String,

    /// Log format
    #[arg(long, value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
}

/// Runs `jobq serve`.
pub async fn run(ctx: &Context, args: ServeArgs) -> anyhow::Result<()> {
    // Audit lines show whatever -q says.
    init_logging_with(
        args.log_format,
        ctx.verbose,
        ctx.quiet,
        &format!("{}=info", serve::AUDIT_TARGET),
    );
    let listen = match &args.listen {
        Some(text) => parse_listen(text).map_err(|e| jobq::Error::invalid(Input::Listen, format!("--listen: {e}")))?,
        None => ctx.config.serve.listen,
    };
    let request_timeout = parse_duration(&args.request_timeout)
        .ok()
        .filter(|d| *d >= Duration::from_millis(1))
        .ok_or_else(|| {
            jobq::Error::invalid(
                Input::Duration,
                format!(
                    "--request-timeout {:?}: expected a duration such as 30s",
                    args.request_timeout
                ),
            )
        })?;
    let tokens = Tokens::from_env(&ctx.config.serve.tokens, |name| std::env::var(name).ok())?;
    let tls = match (args.tls_cert, args.tls_key) {
        (Some(cert), Some(key)) => Some(Tls { cert, key }),
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let options = Options {
        listen,
        tls,
        request_timeout,
    };
    // Checked before the store is opened: a refused start touches nothing.
    serve::check(&tokens, &options)?;
    let client = ctx.client().await?;
    let server = serve::start(client, &ctx.config, tokens, options).await?;
    tracing::info!(
        "serving {scheme}://{}/api/v1 (store {})",
        server.local_addr(),
        ctx.config.url.redacted()
    );
    shutdown_signal().await;
    tracing::info!("stopping: letting running requests finish");
    server.shutdown();
    server.stopped().await?;
    Ok(())
}

/// SIGTERM or ctrl-c.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
