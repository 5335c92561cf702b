//! Where oh-my-pi (`omp`) keeps its data, by omp's own rules (`pi-utils/src/dirs.ts` 18.2.9,
//! the `DirResolver` omp 18.3.4 runs with): the agent directory, and the data directory under
//! which its `sessions/` and `blobs/` are.
//!
//! - the config root is `~/.omp` (`$PI_CONFIG_DIR` renames `.omp`), or
//!   `~/.omp/profiles/<name>` for a named profile (`$OMP_PROFILE`, else `$PI_PROFILE`; an
//!   empty `$OMP_PROFILE` is the default profile);
//! - the agent directory is `$PI_CODING_AGENT_DIR` (made absolute, no `~` expansion: omp uses
//!   `path.resolve`) in the default profile, else `<config root>/agent`;
//! - on Linux and macOS, when the agent directory is the default one and
//!   `$XDG_DATA_HOME/omp` exists (`$XDG_DATA_HOME/omp/profiles/<name>` for a profile), the data
//!   directory is that, flattened (`$XDG_DATA_HOME/omp/sessions`, `…/blobs`): omp 18.2.8 moved
//!   its store there without notice;
//! - otherwise the data directory is the agent directory.
//!
//! `~` is [`crate::discover::home_dir`], Node's `os.homedir()` as Bun gives it.

use crate::discover::home_dir;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

/// The directories omp would use, found from the environment ([`OmpStore::from_env`]) or
/// given ([`OmpStore::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmpStore {
    /// The agent directory (`getAgentDir()`).
    pub agent_dir: PathBuf,
    /// Where `sessions/` and `blobs/` are: the agent directory, or `$XDG_DATA_HOME/omp`.
    pub data_dir: PathBuf,
}

/// The environment [`OmpStore::resolve`] reads (each `None` when unset).
#[derive(Debug, Clone, Default)]
pub struct OmpEnv {
    /// `$HOME` (else the passwd home).
    pub home: Option<PathBuf>,
    /// `$PI_CONFIG_DIR`.
    pub config_dir: Option<OsString>,
    /// `$PI_CODING_AGENT_DIR`.
    pub agent_dir: Option<OsString>,
    /// `$OMP_PROFILE`.
    pub omp_profile: Option<OsString>,
    /// `$PI_PROFILE`.
    pub pi_profile: Option<OsString>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<OsString>,
}

impl OmpEnv {
    /// The process's environment.
    pub fn current() -> OmpEnv {
        let var = |name| std::env::var_os(name);
        OmpEnv {
            home: home_dir(),
            config_dir: var("PI_CONFIG_DIR"),
            agent_dir: var("PI_CODING_AGENT_DIR"),
            omp_profile: var("OMP_PROFILE"),
            pi_profile: var("PI_PROFILE"),
            xdg_data_home: var("XDG_DATA_HOME"),
        }
    }
}

impl OmpStore {
    /// omp's directories for this process's environment.
    pub fn from_env() -> io::Result<OmpStore> {
        OmpStore::resolve(&OmpEnv::current())
    }

    /// omp's directories for `env`; an error (which says what to set) when a home directory
    /// is needed and there is none.
    pub fn resolve(env: &OmpEnv) -> io::Result<OmpStore> {
        let profile = profile(env);
        let home = env.home.clone().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "HOME is not set and the user has no home directory, to find omp's directory: set HOME or PI_CODING_AGENT_DIR",
            )
        });
        let config_name = env
            .config_dir
            .clone()
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".omp".into());
        let config_root = |home: PathBuf| {
            let root = home.join(&config_name);
            match &profile {
                Some(name) => root.join("profiles").join(name),
                None => root,
            }
        };
        let override_dir = env
            .agent_dir
            .clone()
            .filter(|d| !d.is_empty() && profile.is_none())
            .map(|d| std::path::absolute(PathBuf::from(d)))
            .transpose()?;
        let (agent_dir, is_default) = match override_dir {
            Some(dir) => {
                // An override equal to the default is the default (XDG still applies).
                let default = home
                    .as_ref()
                    .ok()
                    .map(|h| config_root(h.clone()).join("agent"));
                let is_default = default.as_deref() == Some(dir.as_path());
                (dir, is_default)
            }
            None => (config_root(home?).join("agent"), true),
        };
        let xdg = cfg!(any(target_os = "linux", target_os = "macos"))
            .then_some(())
            .filter(|()| is_default)
            .and(env.xdg_data_home.as_ref().filter(|d| !d.is_empty()))
            .map(|base| {
                let root = Path::new(base).join("omp");
                match &profile {
                    Some(name) => root.join("profiles").join(name),
                    None => root,
                }
            })
            .filter(|dir| dir.exists());
        Ok(OmpStore {
            data_dir: xdg.unwrap_or_else(|| agent_dir.clone()),
            agent_dir,
        })
    }

    /// The directory of sessions (`getDefaultSessionDir`'s parent).
    pub fn sessions_dir(&self) -> PathBuf {
        self.data_dir.join("sessions")
    }

    /// The file of pinned session ids (`session-pins.json` in the agent directory), which
    /// omp's lists put first.
    pub fn pins_file(&self) -> PathBuf {
        self.agent_dir.join("session-pins.json")
    }

    /// Where omp keeps the sessions of the working directory `cwd` (`computeDefaultSessionDir`
    /// in `session-paths.ts`), without creating or moving anything; see [`ProjectDirs`].
    pub fn project_dirs(&self, cwd: &Path, env: &OmpEnv) -> ProjectDirs {
        let resolved = crate::discover::resolve_lexically(cwd);
        let canonical = equivalent(&resolved);
        let home = env.home.as_deref().map(equivalent);
        let tmp = equivalent(&temp_dir());
        let name = match (
            home.as_deref().and_then(|h| inside(h, &canonical)),
            inside(&tmp, &canonical),
        ) {
            (Some(relative), _) => encode_relative("-", &relative),
            (None, Some(relative)) => encode_relative("-tmp", &relative),
            (None, None) => encode_absolute(&canonical),
        };
        let dir = self.sessions_dir().join(name);
        let mut legacy: Vec<PathBuf> = [&resolved, &canonical]
            .iter()
            .map(|cwd| self.sessions_dir().join(encode_absolute(cwd)))
            .filter(|old| *old != dir)
            .collect();
        legacy.dedup();
        ProjectDirs { dir, legacy }
    }

    /// The blob store: `blob:sha256:<hex>` references name files `<hex>` in it.
    pub fn blobs_dir(&self) -> PathBuf {
        self.data_dir.join("blobs")
    }

    /// Puts a blob into the store at `dir` as omp's `BlobStore.putSync` does: the file
    /// `<hash>` (created with the directory, replaced when there), then a side file
    /// `<hash>.<extension>` for viewers, a hard link to it (kept when it exists; a copy
    /// where links fail). Each file is written atomically ([`crate::publish::publish`]):
    /// complete and synced before it has its name, a link in its place replaced, not
    /// followed.
    pub fn put_blob(
        dir: &Path,
        hash: &str,
        bytes: &[u8],
        extension: Option<&str>,
    ) -> io::Result<()> {
        if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{hash:?} is not a SHA-256 in lowercase hex"),
            ));
        }
        if let Some(extension) = extension
            && !(extension.starts_with(|c: char| c.is_ascii_alphanumeric())
                && extension
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{extension:?} is not a file extension"),
            ));
        }
        std::fs::create_dir_all(dir)?;
        let blob = dir.join(hash);
        crate::publish::publish(&blob, bytes, true)?;
        let Some(extension) = extension else {
            return Ok(());
        };
        let side = dir.join(format!("{hash}.{extension}"));
        match std::fs::hard_link(&blob, &side) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(_) => crate::publish::publish(&side, bytes, true),
        }
    }

    /// The blob store of this environment's omp ([`OmpStore::from_env`]), when it exists:
    /// where the commands look up `blob:sha256:` references unless told another directory.
    pub fn existing_blobs_dir() -> Option<PathBuf> {
        let dir = OmpStore::from_env().ok()?.blobs_dir();
        dir.is_dir().then_some(dir)
    }
}

/// The names omp's lists take (`Bun.Glob` of `*.jsonl` in a project directory, `*/*.jsonl`
/// with `listAll`): links are not followed and hidden names not matched, as Bun's glob
/// scanner does by default.
impl OmpStore {
    /// Whether `path`, found in a project directory, is a session file omp lists: `None` when
    /// its name is not one omp's glob matches (not `*.jsonl`, or hidden), else whether it is
    /// a regular file (a link, even to one, is not), or the error that kept it from being
    /// looked at.
    pub fn lists_session_file(path: &Path) -> Option<io::Result<bool>> {
        let name = path.file_name()?.to_string_lossy();
        (name.ends_with(".jsonl") && !name.starts_with('.')).then_some(())?;
        Some(std::fs::symlink_metadata(path).map(|m| m.is_file()))
    }

    /// Whether `path`, found in the sessions directory, is a project directory `listAll`
    /// looks into: a real directory (not a link to one) whose name is not hidden.
    pub fn lists_project_dir(path: &Path) -> bool {
        path.file_name()
            .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
    }
}

/// The session directories of one working directory ([`OmpStore::project_dirs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectDirs {
    /// omp's directory for it: `-<path under home>` (`-` for home itself), else
    /// `-tmp-<path under the temp directory>`, else `--<absolute path>--`, each `/`, `\` and
    /// `:` of the path as `-`, the path with its links resolved.
    pub dir: PathBuf,
    /// The `--<absolute path>--` directories of omp before 17.2.9 (of the path as given and
    /// with links resolved), other than `dir`. omp moves their sessions into `dir` the next
    /// time it starts in that directory (a file whose name `dir` already has stays behind);
    /// until then they are that project's sessions too. The hashed names 17.2.5–17.2.8 used
    /// for a few days are not looked for.
    pub legacy: Vec<PathBuf>,
}

/// `resolveEquivalentPath`: the path with its links resolved, or as it is when that fails.
fn equivalent(path: &Path) -> PathBuf {
    let resolved = crate::discover::resolve_lexically(path);
    std::fs::canonicalize(&resolved).unwrap_or(resolved)
}

/// Node's `os.tmpdir()`: `$TMPDIR` (then `$TMP`, `$TEMP`) without a trailing `/`, else `/tmp`.
fn temp_dir() -> PathBuf {
    ["TMPDIR", "TMP", "TEMP"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(|v| {
            let text = v.to_string_lossy();
            let trimmed = text.strip_suffix('/').filter(|t| !t.is_empty());
            PathBuf::from(trimmed.map_or_else(|| v.clone(), Into::into))
        })
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// `path.relative(root, path)` when it does not leave `root` (omp's test: not starting with
/// `..`, not absolute), as text.
fn inside(root: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(root).ok()?;
    let text = relative.to_string_lossy().into_owned();
    (!text.starts_with("..")).then_some(text)
}

/// `encodeRelativeSessionDirName(prefix, relative)`.
fn encode_relative(prefix: &str, relative: &str) -> String {
    let encoded = relative.replace(['/', '\\', ':'], "-");
    match (encoded.is_empty(), prefix.ends_with('-')) {
        (true, _) => prefix.to_owned(),
        (false, true) => format!("{prefix}{encoded}"),
        (false, false) => format!("{prefix}-{encoded}"),
    }
}

/// `encodeLegacyAbsoluteSessionDirName(cwd)`: `--`, the path without its first `/` and with
/// each `/`, `\` and `:` as `-`, `--`.
fn encode_absolute(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// The active profile (`OMP_PROFILE` first, even empty; else `PI_PROFILE`), trimmed, as
/// `normalizeProfileName` takes it: `None` for the default profile (empty or `"default"`) or
/// a name omp rejects (it falls back to the default at start-up): not
/// `^[a-z0-9][a-z0-9._-]{0,63}$`, ending with `.`, or a Windows device name.
fn profile(env: &OmpEnv) -> Option<String> {
    let raw = match &env.omp_profile {
        Some(p) => p,
        None => env.pi_profile.as_ref()?,
    };
    let name = raw.to_str()?.trim();
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= 64
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
        && !name.ends_with('.')
        && name != "default"
        && !is_windows_device(name);
    valid.then(|| name.to_owned())
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, alone or with an extension.
fn is_windows_device(name: &str) -> bool {
    let base = name
        .split('.')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    matches!(base.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || (base.len() == 4
            && (base.starts_with("COM") || base.starts_with("LPT"))
            && base.as_bytes()[3].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> OmpEnv {
        OmpEnv {
            home: Some(home.to_owned()),
            ..OmpEnv::default()
        }
    }

    #[test]
    fn the_default_store_is_under_dot_omp() {
        let home = Path::new("/home/u");
        let store = OmpStore::resolve(&env(home)).unwrap();
        assert_eq!(store.agent_dir, home.join(".omp/agent"));
        assert_eq!(store.sessions_dir(), home.join(".omp/agent/sessions"));
        assert_eq!(store.blobs_dir(), home.join(".omp/agent/blobs"));
    }

    #[test]
    fn config_dir_profiles_and_the_agent_dir_override() {
        let home = Path::new("/home/u");
        let store = OmpStore::resolve(&OmpEnv {
            config_dir: Some(".omp-dev".into()),
            pi_profile: Some(" work ".into()),
            agent_dir: Some("/ignored/in/a/profile".into()),
            ..env(home)
        })
        .unwrap();
        assert_eq!(store.agent_dir, home.join(".omp-dev/profiles/work/agent"));
        // An empty OMP_PROFILE is the default profile, whatever PI_PROFILE says.
        let store = OmpStore::resolve(&OmpEnv {
            omp_profile: Some("".into()),
            pi_profile: Some("work".into()),
            agent_dir: Some("/srv/omp".into()),
            ..env(home)
        })
        .unwrap();
        assert_eq!(store.agent_dir, Path::new("/srv/omp"));
        assert_eq!(store.data_dir, Path::new("/srv/omp"));
    }

    #[test]
    fn an_existing_xdg_data_home_omp_holds_the_data() {
        let dir = std::env::temp_dir().join(format!("omp-store-{}", std::process::id()));
        let home = dir.join("home");
        let xdg = dir.join("xdg");
        let with_xdg = OmpEnv {
            xdg_data_home: Some(xdg.clone().into()),
            ..env(&home)
        };
        // Not there yet: the agent directory holds everything.
        let store = OmpStore::resolve(&with_xdg).unwrap();
        assert_eq!(store.data_dir, home.join(".omp/agent"));
        std::fs::create_dir_all(xdg.join("omp")).unwrap();
        let store = OmpStore::resolve(&with_xdg).unwrap();
        if cfg!(any(target_os = "linux", target_os = "macos")) {
            assert_eq!(store.sessions_dir(), xdg.join("omp/sessions"));
            assert_eq!(store.agent_dir, home.join(".omp/agent"));
        }
        // An agent directory of one's own is not moved.
        let store = OmpStore::resolve(&OmpEnv {
            agent_dir: Some(dir.join("mine").into()),
            ..with_xdg
        })
        .unwrap();
        assert_eq!(store.data_dir, dir.join("mine"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_project_directory_is_named_as_omp_names_it() {
        let root = std::env::temp_dir().join(format!("omp-dirs-{}", std::process::id()));
        let home = root.join("home");
        let work = home.join("code/app:1");
        std::fs::create_dir_all(&work).unwrap();
        let env = env(&home);
        let store = OmpStore::resolve(&env).unwrap();
        let sessions = store.sessions_dir();
        let dirs = store.project_dirs(&work, &env);
        assert_eq!(dirs.dir, sessions.join("-code-app-1"));
        let home_name = encode_absolute(&std::fs::canonicalize(&work).unwrap());
        assert!(dirs.legacy.contains(&sessions.join(home_name)), "{dirs:?}");
        assert_eq!(store.project_dirs(&home, &env).dir, sessions.join("-"));
        // A link to the project is the project.
        let link = root.join("link");
        std::os::unix::fs::symlink(&work, &link).unwrap();
        assert_eq!(store.project_dirs(&link, &env).dir, dirs.dir);
        // Outside home and the temp directory: the absolute path.
        let dirs = store.project_dirs(Path::new("/srv/x/../proj"), &env);
        assert_eq!(dirs.dir, sessions.join("--srv-proj--"));
        assert!(dirs.legacy.is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn no_home_is_an_error_that_says_what_to_set() {
        let error = OmpStore::resolve(&OmpEnv::default()).unwrap_err();
        assert!(error.to_string().contains("PI_CODING_AGENT_DIR"), "{error}");
        let store = OmpStore::resolve(&OmpEnv {
            agent_dir: Some("/srv/omp".into()),
            ..OmpEnv::default()
        })
        .unwrap();
        assert_eq!(store.blobs_dir(), Path::new("/srv/omp/blobs"));
    }
}
