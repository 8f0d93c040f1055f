//! Signature tests' tools: certificates made by the `openssl` command (a root
//! CA, an intermediate CA under it, and leaves under that, each for a
//! different purpose), and the real `mcpb` CLI that signs bundles.

use std::path::Path;
use std::process::Command;

/// The key type of every certificate [`authority`] makes.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    /// EC P-256.
    Ec,
    /// RSA 2048 (what `mcpb sign`, through node-forge, can use).
    Rsa,
}

impl Key {
    fn newkey(self) -> &'static str {
        match self {
            Key::Ec => "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes",
            Key::Rsa => "-newkey rsa:2048 -nodes",
        }
    }
}

/// Runs `openssl` in `dir` with `args` (split on spaces); panics with its
/// stderr when it fails.
pub fn openssl(dir: &Path, args: &str) {
    let out = Command::new("openssl").args(args.split(' ')).current_dir(dir).output().expect("openssl runs");
    assert!(out.status.success(), "openssl {args}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Writes, in `dir`, `root.pem` (CN `Test-Root`), `inter.pem` (CN
/// `Test-Intermediate`, issued by the root) and three leaves issued by the
/// intermediate, each with its `.key`: `leaf` (CN `Ada-Tools`, O `Ada-Ltd`,
/// for code signing), `web` (CN `web.example`, for TLS servers only) and
/// `bare` (CN `bare.example`, no extended key usage). All valid for 30 days.
pub fn authority(dir: &Path, key: Key) {
    let new = key.newkey();
    std::fs::write(dir.join("ca.ext"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n").unwrap();
    std::fs::write(
        dir.join("leaf.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=codeSigning\n",
    )
    .unwrap();
    std::fs::write(dir.join("web.ext"), "basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n").unwrap();
    std::fs::write(dir.join("bare.ext"), "basicConstraints=CA:FALSE\n").unwrap();
    openssl(
        dir,
        &format!(
            "req -x509 {new} -keyout root.key -out root.pem -days 30 -subj /CN=Test-Root \
             -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign"
        ),
    );
    openssl(dir, &format!("req {new} -keyout inter.key -out inter.csr -subj /CN=Test-Intermediate"));
    openssl(
        dir,
        "x509 -req -in inter.csr -CA root.pem -CAkey root.key -CAcreateserial -out inter.pem -days 30 -extfile ca.ext",
    );
    for (name, subject) in
        [("leaf", "/CN=Ada-Tools/O=Ada-Ltd"), ("web", "/CN=web.example"), ("bare", "/CN=bare.example")]
    {
        openssl(dir, &format!("req {new} -keyout {name}.key -out {name}.csr -subj {subject}"));
        openssl(
            dir,
            &format!(
                "x509 -req -in {name}.csr -CA inter.pem -CAkey inter.key -CAcreateserial -out {name}.pem -days 30 \
                 -extfile {name}.ext"
            ),
        );
    }
}

/// Signs `bundle` with `cert` (and its `key`, both in `dir`), including the
/// `extra` certificates, and appends the block as `mcpb sign` does.
pub fn sign(dir: &Path, bundle: &Path, cert: &str, key: &str, extra: Option<&str>) {
    let certfile = extra.map(|e| format!(" -certfile {e}")).unwrap_or_default();
    openssl(
        dir,
        &format!(
            "cms -sign -binary -md sha256 -in {} -signer {cert} -inkey {key} -outform DER -out sig.der{certfile}",
            bundle.display()
        ),
    );
    let sig = std::fs::read(dir.join("sig.der")).unwrap();
    let mut file = std::fs::read(bundle).unwrap();
    file.extend_from_slice(b"MCPB_SIG_V1");
    file.extend_from_slice(&(sig.len() as u32).to_le_bytes());
    file.extend_from_slice(&sig);
    file.extend_from_slice(b"MCPB_SIG_END");
    std::fs::write(bundle, file).unwrap();
}

/// The DER of the PEM certificate `pem` in `dir`.
pub fn der(dir: &Path, pem: &str) -> Vec<u8> {
    openssl(dir, &format!("x509 -in {pem} -outform DER -out {pem}.der"));
    std::fs::read(dir.join(format!("{pem}.der"))).unwrap()
}

/// Runs the real `mcpb` CLI (the npm peer) in `dir`; panics with its output when it fails.
pub fn mcpb(dir: &Path, args: &[&str]) {
    let out = Command::new(crate::peers::npm_bin("mcpb")).args(args).current_dir(dir).output().expect("run mcpb");
    assert!(
        out.status.success(),
        "mcpb {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
