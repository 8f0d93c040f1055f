//! Signatures made by `openssl cms -sign` (detached, the way `mcpb sign`
//! signs) in the `mcpb` block: a chain to a given root, a self-signed
//! certificate, a certificate not meant for code, and files changed after
//! signing. `crates/cli/tests/cli/mcp_install.rs` checks bundles signed by the
//! real `mcpb` CLI.

use std::path::Path;

use patchbay_test_support::signing::{Key, authority, der, openssl, sign};
use rustls_pki_types::{CertificateDer, TrustAnchor};
use serde_json::json;
use sha2::Digest;

use super::tests::{INDEX, bundle_file, manifest, node_config, settings};
use super::*;

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

    let opened = Bundle::open_trusting(&bundle, dir.path(), std::slice::from_ref(&root)).unwrap();
    let Signature::Signed { signer } = opened.signature() else { panic!("signed: {:?}", opened.signature()) };
    assert_eq!((signer.publisher.as_str(), signer.issuer.as_str()), ("Ada-Tools", "Test-Intermediate"));
    assert_eq!(signer.fingerprint, hex::encode(sha2::Sha256::digest(&leaf)));
    assert!(signer.valid_from <= signer.valid_to && signer.valid_to.len() == 10, "{signer:?}");
    assert_eq!(&opened.info(dir.path(), None).signature, opened.signature());

    // The same file, where that root is not trusted.
    match Bundle::open_trusting(&bundle, dir.path(), &[]).unwrap().signature() {
        Signature::Untrusted { signer, reason } => {
            assert_eq!(signer.publisher, "Ada-Tools");
            assert_eq!(*reason, Distrust::UnknownIssuer);
        }
        other => panic!("untrusted: {other:?}"),
    }
    // Without the intermediate in the signature, the chain cannot be built.
    let again = a_bundle(dir.path());
    sign(dir.path(), &again, "leaf.pem", "leaf.key", None);
    assert!(matches!(
        Bundle::open_trusting(&again, dir.path(), &[root]).unwrap().signature(),
        Signature::Untrusted { .. }
    ));
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
        match Bundle::open_trusting(&bundle, dir.path(), std::slice::from_ref(&root)).unwrap().signature() {
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
    assert_eq!(Bundle::open(&bundle, dir.path()).unwrap().signature(), &Signature::Unsigned);
    sign(dir.path(), &bundle, "self.pem", "self.key", None);
    // Trusting the certificate itself does not make it more than self-signed.
    let own = anchor(&der(dir.path(), "self.pem"));
    match Bundle::open_trusting(&bundle, dir.path(), &[own]).unwrap().signature() {
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
        match Bundle::open(&bundle, dir.path()) {
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
        Bundle::open(&bundle, dir.path()).unwrap()
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

/// A bundle whose command is `sh`, as a second archive an attacker adds: its bytes.
fn an_attackers_zip(dir: &Path) -> Vec<u8> {
    let config = json!({"command": "sh", "args": ["-c", "echo owned"]});
    std::fs::read(bundle_file(dir, "evil.mcpb", &manifest(config, json!({})).to_string(), &[INDEX])).unwrap()
}

/// `signed` split into what its signature covers and the DER in its block.
fn split_signed(signed: &[u8]) -> (&[u8], &[u8]) {
    let start = signed.windows(11).rposition(|w| w == b"MCPB_SIG_V1").unwrap();
    (&signed[..start], &signed[start + 15..signed.len() - 12])
}

/// `content` followed by a signature block holding `body`.
fn with_block(content: &[u8], body: &[u8]) -> Vec<u8> {
    let length = (body.len() as u32).to_le_bytes();
    [content, b"MCPB_SIG_V1", &length, body, b"MCPB_SIG_END"].concat()
}

/// A bundle signed by `Ada-Tools` (the test CA's leaf) and the root that trusts it.
fn signed_by_ada(dir: &Path) -> (Vec<u8>, TrustAnchor<'static>) {
    authority(dir, Key::Ec);
    let bundle = a_bundle(dir);
    sign(dir, &bundle, "leaf.pem", "leaf.key", Some("inter.pem"));
    (std::fs::read(&bundle).unwrap(), anchor(&der(dir, "root.pem")))
}

#[test]
fn a_second_zip_in_the_signature_block_after_the_signature_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (signed, root) = signed_by_ada(dir.path());
    let (content, der) = split_signed(&signed);
    let crafted = dir.path().join("crafted.mcpb");
    let open = |bytes: Vec<u8>| {
        std::fs::write(&crafted, bytes).unwrap();
        Bundle::open_trusting(&crafted, dir.path(), std::slice::from_ref(&root))
    };

    // The attack: a whole zip (its own directory and end record, its manifest running `sh`) after the DER.
    let evil = an_attackers_zip(dir.path());
    let error = open(with_block(content, &[der, &evil].concat())).unwrap_err();
    assert!(
        matches!(&error, BundleError::Signature { source: SignatureError::Damaged(_), .. }),
        "refused as damaged: {error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("{} is refused: its signature block is damaged: it holds more than the signature", crafted.display())
    );
    // Anything at all after the DER, too.
    assert!(matches!(open(with_block(content, &[der, &[0; 4]].concat())), Err(BundleError::Signature { .. })));
    // The signed bundle itself still opens, signed, with its own command.
    let opened = open(signed.clone()).unwrap();
    assert!(matches!(opened.signature(), Signature::Signed { .. }), "{:?}", opened.signature());
    assert_eq!(opened.launch_config().command, "node");
}

/// `der` (one DER element) with `extra` added at the end of its last element
/// `depth` levels down, every length on the way grown to fit.
fn append_inside(der: &[u8], depth: usize, extra: &[u8]) -> Vec<u8> {
    let (tag, body) = element(der);
    let body = match depth {
        0 => [body, extra].concat(),
        _ => {
            let mut last = 0;
            while last + element_len(&body[last..]) < body.len() {
                last += element_len(&body[last..]);
            }
            [&body[..last], &append_inside(&body[last..], depth - 1, extra)[..]].concat()
        }
    };
    encode(tag, &body)
}

/// A DER element's tag and contents.
fn element(der: &[u8]) -> (u8, &[u8]) {
    let (header, len) = match der[1] {
        short if short < 0x80 => (2, short as usize),
        long => {
            let n = (long & 0x7f) as usize;
            (2 + n, der[2..2 + n].iter().fold(0, |acc, b| acc << 8 | *b as usize))
        }
    };
    (der[0], &der[header..header + len])
}

fn element_len(der: &[u8]) -> usize {
    let (tag, body) = element(der);
    encode(tag, body).len()
}

fn encode(tag: u8, body: &[u8]) -> Vec<u8> {
    let len = body.len();
    let length = match len {
        0..0x80 => vec![len as u8],
        _ => {
            let bytes: Vec<u8> = len.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
            [&[0x80 | bytes.len() as u8][..], &bytes].concat()
        }
    };
    [&[tag][..], &length, body].concat()
}

#[test]
fn a_zip_hidden_inside_the_signature_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let (signed, root) = signed_by_ada(dir.path());
    let (content, der) = split_signed(&signed);
    // An unsigned attribute (which the signature does not cover) holding the
    // attacker's zip, at the end of the SignerInfo: ContentInfo → [0] →
    // SignedData → SignerInfos → SignerInfo. The block holds only the DER.
    let evil = an_attackers_zip(dir.path());
    let attribute = encode(0x30, &[&[0x06, 0x02, 0x2a, 0x03][..], &encode(0x31, &encode(0x04, &evil))].concat());
    let grown = append_inside(der, 4, &encode(0xa1, &attribute));
    let crafted = dir.path().join("crafted.mcpb");
    std::fs::write(&crafted, with_block(content, &grown)).unwrap();

    let opened = Bundle::open_trusting(&crafted, dir.path(), &[root]).unwrap();
    assert!(matches!(opened.signature(), Signature::Signed { .. }), "{:?}", opened.signature());
    assert_eq!(opened.launch_config().command, "node", "read from the signed bytes only");
    let home = dir.path().join("ext/notes");
    opened.unpack(&home).unwrap();
    let manifest = std::fs::read_to_string(home.join("manifest.json")).unwrap();
    assert!(manifest.contains(r#""command":"node""#) && !manifest.contains("owned"), "{manifest}");
}

#[test]
fn signed_bytes_that_do_not_end_with_the_archive_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    openssl(
        dir.path(),
        "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout self.key -out self.pem -days 30 -subj /CN=Me",
    );
    // Something after the zip's end record, signed along with it.
    let bundle = a_bundle(dir.path());
    let mut padded = std::fs::read(&bundle).unwrap();
    padded.extend_from_slice(b"more");
    std::fs::write(&bundle, padded).unwrap();
    sign(dir.path(), &bundle, "self.pem", "self.key", None);
    match Bundle::open(&bundle, dir.path()) {
        Err(BundleError::Signature { source: SignatureError::NotAfterArchive, .. }) => {}
        other => panic!("refused: {other:?}"),
    }
}
