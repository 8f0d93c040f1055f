//! Signatures made by `openssl cms -sign` (detached, the way `mcpb sign`
//! signs) in the `mcpb` block: a chain to a given root, a self-signed
//! certificate, a certificate not meant for code, and files changed after
//! signing. `crates/cli/tests/mcp_install.rs` checks bundles signed by the
//! real `mcpb` CLI.

use std::path::Path;

use patchbay_test_support::signing::{Key, authority, der, openssl};
use rustls_pki_types::{CertificateDer, TrustAnchor};
use sha2::Digest;

use super::tests::{INDEX, bundle_file, manifest, node_config, settings};
use super::*;

/// Signs `bundle` with `cert` (and its `key`), including the `extra`
/// certificates, and appends the block as `mcpb sign` does.
fn sign(dir: &Path, bundle: &Path, cert: &str, key: &str, extra: Option<&str>) {
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

fn a_bundle(dir: &Path) -> std::path::PathBuf {
    named_bundle(dir, "b.mcpb")
}

fn named_bundle(dir: &Path, name: &str) -> std::path::PathBuf {
    bundle_file(dir, name, &manifest(node_config(), settings()).to_string(), &[INDEX])
}

fn anchor(der: &[u8]) -> TrustAnchor<'static> {
    webpki::anchor_from_trusted_cert(&CertificateDer::from(der)).unwrap().to_owned()
}

#[test]
fn a_chain_to_a_trusted_root_is_signed_and_names_the_publisher() {
    let dir = tempfile::tempdir().unwrap();
    authority(dir.path(), Key::Ec);
    let bundle = a_bundle(dir.path());
    sign(dir.path(), &bundle, "leaf.pem", "leaf.key", Some("inter.pem"));
    let root = anchor(&der(dir.path(), "root.pem"));
    let leaf = der(dir.path(), "leaf.pem");

    let opened = Bundle::open_trusting(&bundle, std::slice::from_ref(&root)).unwrap();
    let Signature::Signed { signer } = opened.signature() else { panic!("signed: {:?}", opened.signature()) };
    assert_eq!((signer.publisher.as_str(), signer.issuer.as_str()), ("Ada-Tools", "Test-Intermediate"));
    assert_eq!(signer.fingerprint, hex::encode(sha2::Sha256::digest(&leaf)));
    assert!(signer.valid_from <= signer.valid_to && signer.valid_to.len() == 10, "{signer:?}");
    assert_eq!(&opened.info(dir.path(), None).signature, opened.signature());

    // The same file, where that root is not trusted.
    match Bundle::open_trusting(&bundle, &[]).unwrap().signature() {
        Signature::Untrusted { signer, reason } => {
            assert_eq!(signer.publisher, "Ada-Tools");
            assert_eq!(*reason, Distrust::UnknownIssuer);
        }
        other => panic!("untrusted: {other:?}"),
    }
    // Without the intermediate in the signature, the chain cannot be built.
    let again = a_bundle(dir.path());
    sign(dir.path(), &again, "leaf.pem", "leaf.key", None);
    assert!(matches!(Bundle::open_trusting(&again, &[root]).unwrap().signature(), Signature::Untrusted { .. }));
}

#[test]
fn a_certificate_not_meant_for_code_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    authority(dir.path(), Key::Ec);
    let root = anchor(&der(dir.path(), "root.pem"));
    // One lists another purpose, one lists none: code signing must be named.
    for leaf in ["web", "bare"] {
        let bundle = a_bundle(dir.path());
        sign(dir.path(), &bundle, &format!("{leaf}.pem"), &format!("{leaf}.key"), Some("inter.pem"));
        match Bundle::open_trusting(&bundle, std::slice::from_ref(&root)).unwrap().signature() {
            Signature::Untrusted { signer, reason } => {
                assert_eq!(signer.publisher, format!("{leaf}.example"));
                assert_eq!(*reason, Distrust::NotForCode);
            }
            other => panic!("untrusted: {other:?}"),
        }
    }
}

#[test]
fn a_self_signed_rsa_certificate_is_self_signed_and_an_unsigned_bundle_unsigned() {
    let dir = tempfile::tempdir().unwrap();
    openssl(
        dir.path(),
        "req -x509 -newkey rsa:2048 -nodes -keyout self.key -out self.pem -days 30 -subj /CN=Me/O=Mine",
    );
    let bundle = a_bundle(dir.path());
    assert_eq!(Bundle::open(&bundle).unwrap().signature(), &Signature::Unsigned);
    sign(dir.path(), &bundle, "self.pem", "self.key", None);
    // Trusting the certificate itself does not make it more than self-signed.
    let own = anchor(&der(dir.path(), "self.pem"));
    match Bundle::open_trusting(&bundle, &[own]).unwrap().signature() {
        Signature::SelfSigned { signer } => {
            assert_eq!((signer.publisher.as_str(), signer.issuer.as_str()), ("Me", "Me"))
        }
        other => panic!("self-signed: {other:?}"),
    }
}

#[test]
fn a_bundle_changed_after_signing_or_with_a_broken_block_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    openssl(
        dir.path(),
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout self.key -out self.pem -days 30 -subj /CN=Me",
    );
    let bundle = a_bundle(dir.path());
    sign(dir.path(), &bundle, "self.pem", "self.key", None);
    let signed = std::fs::read(&bundle).unwrap();
    let block = signed.len() - signed.windows(11).rposition(|w| w == b"MCPB_SIG_V1").unwrap();
    let refused = |bytes: Vec<u8>| {
        std::fs::write(&bundle, bytes).unwrap();
        match Bundle::open(&bundle) {
            Err(BundleError::Signature { source, .. }) => source,
            other => panic!("refused: {other:?}"),
        }
    };

    // The first entry's modification time, changed: the zip still reads, the digest does not match.
    let mut changed = signed.clone();
    changed[10] ^= 1;
    assert_eq!(refused(changed), SignatureError::Changed);
    let message = BundleError::Signature { file: bundle.clone(), source: SignatureError::Changed }.to_string();
    assert!(message.contains("b.mcpb is refused: it was changed after it was signed"), "{message}");

    // The signature's last byte (the end of the signature value), changed.
    let mut forged = signed.clone();
    let last = signed.len() - b"MCPB_SIG_END".len() - 1;
    forged[last] ^= 0x55;
    assert_eq!(refused(forged), SignatureError::BadSignature);

    // The DER replaced with zeros of the same length.
    let mut garbage = signed.clone();
    let body = signed.len() - block + 15;
    garbage[body..signed.len() - 12].fill(0);
    assert!(matches!(refused(garbage), SignatureError::Damaged(_)));
}

#[test]
fn the_installed_signature_is_recorded_and_a_changed_signer_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    openssl(dir.path(), "req -x509 -newkey rsa:2048 -nodes -keyout a.key -out a.pem -days 30 -subj /CN=A");
    openssl(dir.path(), "req -x509 -newkey rsa:2048 -nodes -keyout b.key -out b.pem -days 30 -subj /CN=B");
    let signed_by = |cert: Option<&str>| {
        let bundle = named_bundle(dir.path(), &format!("{}.mcpb", cert.unwrap_or("unsigned")));
        if let Some(cert) = cert {
            sign(dir.path(), &bundle, &format!("{cert}.pem"), &format!("{cert}.key"), None);
        }
        Bundle::open(&bundle).unwrap()
    };
    let (a, b, unsigned) = (signed_by(Some("a")), signed_by(Some("b")), signed_by(None));

    let home = dir.path().join("ext/notes");
    a.unpack(&home).unwrap();
    let installed = installed_signature(&home).unwrap();
    assert_eq!(&installed, a.signature());
    assert!(!installed.changed_to(a.signature()), "the same certificate");
    assert!(installed.changed_to(b.signature()), "another certificate");
    assert!(installed.changed_to(unsigned.signature()), "no signature");

    // An unsigned install is recorded too, and nothing is compared against it.
    unsigned.unpack(&home).unwrap();
    assert_eq!(installed_signature(&home), Some(Signature::Unsigned));
    assert!(!Signature::Unsigned.changed_to(b.signature()));
    assert_eq!(installed_signature(&dir.path().join("nowhere")), None);
}
