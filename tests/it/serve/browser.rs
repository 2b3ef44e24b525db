//! A real Chromium, driven through chromedriver (WebDriver) with `fantoccini`: the chromedriver a
//! test starts on a free port, Chromium headless with a fresh profile and its background networking
//! off (on a closed network it otherwise hangs on start), both in a process group of their own that
//! is killed when the test ends, passed or failed. No
//! browser on the machine fails the test, saying how to install one: it never passes silently.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::eventually;

/// How long the page may take to show something on a loaded test machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const INSTALL: &str = "apt-get install chromium chromium-driver";

/// A headless Chromium under its own chromedriver.
pub struct Browser {
    client: Option<Client>,
    driver: Child,
    _profile: TempDir,
    shots: PathBuf,
}

impl Browser {
    /// Starts chromedriver and a Chromium session; screenshots go to `shots`.
    pub async fn start(shots: PathBuf) -> Browser {
        for program in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(program).exists(),
                "{program} is missing: the dashboard test needs a real browser; install it with `{INSTALL}`"
            );
        }
        let profile = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = std::fs::File::create(profile.path().join("chromedriver.log")).unwrap();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            // Chromium is chromedriver's child: one group, so the test can stop both.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {CHROMEDRIVER}: {e} (install it with `{INSTALL}`)"));
        let url = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        eventually("chromedriver to answer /status", PATIENCE, async || {
            match http.get(format!("{url}/status")).send().await {
                Ok(r) if r.status().is_success() => Ok(()),
                Ok(r) => Err(format!("status {}", r.status())),
                Err(e) => Err(e.to_string()),
            }
        })
        .await;
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1280,1000",
                    format!("--user-data-dir={}", profile.path().join("profile").display()),
                ],
            }),
        );
        let client = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps)
            .connect(&url)
            .await
            .unwrap_or_else(|e| panic!("starting Chromium through chromedriver: {e} (install both with `{INSTALL}`)"));
        std::fs::create_dir_all(&shots).unwrap();
        Browser {
            client: Some(client),
            driver,
            _profile: profile,
            shots,
        }
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("a session")
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        self.client()
            .goto(url)
            .await
            .unwrap_or_else(|e| panic!("opening {url}: {e}"));
    }

    /// Waits until an element matches `css`.
    pub async fn find(&self, css: &str) -> Element {
        eventually(format!("an element matching {css}"), PATIENCE, async || {
            self.client().find(Locator::Css(css)).await.ok()
        })
        .await
    }

    /// Waits until an element matches `css`, and clicks it.
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        element.click().await.unwrap_or_else(|e| panic!("clicking {css}: {e}"));
    }

    /// Types `text` into the field matching `css`, replacing what it held.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        element.clear().await.unwrap();
        element
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {css}: {e}"));
    }

    /// Runs `script` (its `return` is the answer) in the page.
    pub async fn eval(&self, script: &str) -> Value {
        self.client()
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("running {script}: {e}"))
    }

    /// Waits until `script` answers `true` in the page; on time-out, says what `seen` answered last.
    pub async fn until(&self, what: &str, script: &str, seen: &str) {
        eventually(what, PATIENCE, async || {
            if self.eval(script).await == Value::Bool(true) {
                Ok(())
            } else {
                Err(self.eval(seen).await.to_string())
            }
        })
        .await
    }

    /// Saves the page as `<name>.png`.
    pub async fn screenshot(&self, name: &str) {
        let png = self.client().screenshot().await.expect("a screenshot");
        let file = self.shots.join(format!("{name}.png"));
        std::fs::write(&file, png).unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
    }

    /// Ends the session (Chromium exits) and chromedriver.
    pub async fn close(mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: kill has no memory-safety preconditions; the group is our own child's.
        unsafe {
            libc::kill(-(self.driver.id() as i32), libc::SIGKILL);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// A port nothing listens on now (the OS's pick; chromedriver takes it a moment later).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}
