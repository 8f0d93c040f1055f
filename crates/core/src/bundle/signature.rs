//! MCPB signatures: who signed a bundle, and whether this computer trusts them.
//!
//! `mcpb sign` appends `MCPB_SIG_V1`, a length, a detached DER PKCS#7 `SignedData` over every byte
//! before it, and `MCPB_SIG_END`. [`verify`] checks the content's digest against the signed
//! `messageDigest`, the signature against the signer's certificate and its chain to the system's roots
//! for code signing, and returns the signed archive's length: the bundle is read from those bytes only.
//!
//! A bundle changed after signing, a block that does not parse, one with more than the signature, or
//! signed bytes that do not end with the zip's end record are errors: nothing unsigned may sit where
//! a zip reader looks. An untrusted certificate is reported with the reason, for the user to decide.
//! The DER reader only finds fields; every cryptographic check is `webpki`'s (aws-lc-rs).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::OnceLock;

use rustls_pki_types::{CertificateDer, SignatureVerificationAlgorithm, TrustAnchor, UnixTime};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use webpki::aws_lc_rs as alg;

const HEADER: &[u8] = b"MCPB_SIG_V1";
const FOOTER: &[u8] = b"MCPB_SIG_END";
/// The largest signature block looked for (a certificate chain is a few KiB).
const MAX_BLOCK: u64 = 1 << 20;

const OID_SIGNED_DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
const OID_MESSAGE_DIGEST: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04];
const OID_SHA256: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01];
const OID_SHA384: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02];
const OID_SHA512: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03];
/// `1.2.840.113549.1.1`: RSA (`rsaEncryption`, `sha256WithRSAEncryption`, …).
const OID_RSA_ARC: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
/// `1.2.840.10045`: ECDSA (`ecdsa-with-SHA256`, …).
const OID_ECDSA_ARC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const OID_COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
const OID_ORGANIZATION: &[u8] = &[0x55, 0x04, 0x0a];
/// `2.5.29.37`, the extended key usage extension.
const OID_EXTENDED_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
/// `1.3.6.1.5.5.7.3.3`, the extended key usage for code signing.
const EKU_CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];

/// Who signed a bundle, and whether they are trusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Signature {
    /// No signature: nothing says who made the bundle.
    Unsigned,
    /// Signed with a certificate that chains to a root this computer trusts,
    /// for code signing.
    Signed { signer: Signer },
    /// Signed with a certificate that signs itself (`mcpb sign --self-signed`):
    /// the bundle is unchanged since then, but nobody vouches for the name.
    SelfSigned { signer: Signer },
    /// A valid signature whose certificate is not trusted, and why.
    Untrusted { signer: Signer, reason: Distrust },
}

/// Why a signing certificate is not trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Distrust {
    /// It does not chain to a root this computer trusts.
    UnknownIssuer,
    Expired,
    NotYetValid,
    /// Its extended key usage does not list code signing.
    NotForCode,
    Revoked,
    /// Anything else wrong with the chain (a bad CA signature, a malformed certificate).
    BadChain,
}

impl std::fmt::Display for Distrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::UnknownIssuer => "its certificate was not issued by an authority this computer trusts",
            Self::Expired => "its certificate has expired",
            Self::NotYetValid => "its certificate is not valid yet",
            Self::NotForCode => "its certificate is not meant for signing code",
            Self::Revoked => "its certificate was revoked",
            Self::BadChain => "its certificate chain does not verify",
        })
    }
}

impl Signature {
    /// The signing certificate, if there is a signature.
    pub fn signer(&self) -> Option<&Signer> {
        match self {
            Self::Unsigned => None,
            Self::Signed { signer } | Self::SelfSigned { signer } | Self::Untrusted { signer, .. } => Some(signer),
        }
    }

    /// Whether `self`, the installed version's signature, was made with a
    /// certificate that `next` is not signed with.
    pub fn changed_to(&self, next: &Signature) -> bool {
        self.signer().is_some_and(|old| next.signer().is_none_or(|new| new.fingerprint != old.fingerprint))
    }
}

impl std::fmt::Display for Signature {
    /// One line for a terminal: who signed it, and what that is worth.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unsigned => write!(f, "unsigned: nothing says who made it"),
            Self::Signed { signer } => write!(
                f,
                "signed by {} (certificate issued by {}, valid until {})",
                signer.publisher, signer.issuer, signer.valid_to
            ),
            Self::SelfSigned { signer } => {
                write!(f, "self-signed by {}: nobody vouches for that name", signer.publisher)
            }
            Self::Untrusted { signer, reason } => write!(f, "signed by {}, not verified: {reason}", signer.publisher),
        }
    }
}

/// The signing certificate, as the install form shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Signer {
    /// The certificate's subject (common name, or organisation).
    pub publisher: String,
    /// Who issued it (common name, or organisation).
    pub issuer: String,
    /// The dates it is valid between, `YYYY-MM-DD`.
    pub valid_from: String,
    pub valid_to: String,
    /// The SHA-256 of the certificate, lowercase hex.
    pub fingerprint: String,
}

/// Why a signature block could not be accepted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SignatureError {
    #[error("cannot read it: {0}")]
    Read(String),
    #[error("its signature block is damaged: {0}")]
    Damaged(&'static str),
    #[error("its signature uses {0}, which Patchbay does not check")]
    Unsupported(&'static str),
    #[error("it was changed after it was signed (its contents do not match the signature)")]
    Changed,
    #[error("its signature does not match the signing certificate")]
    BadSignature,
    #[error("its signature does not start where its archive ends")]
    NotAfterArchive,
}

/// Reads `file`'s signature, if it has one, and checks it against `roots`;
/// with the length of the archive it covers (the whole file when unsigned).
pub fn verify(file: &Path, roots: &[TrustAnchor<'_>]) -> Result<(Signature, u64), SignatureError> {
    let read = |e: std::io::Error| SignatureError::Read(e.to_string());
    let mut f = File::open(file).map_err(read)?;
    let len = f.metadata().map_err(read)?.len();
    let tail_len = len.min(MAX_BLOCK + (HEADER.len() + 4 + FOOTER.len()) as u64);
    f.seek(SeekFrom::Start(len - tail_len)).map_err(read)?;
    let mut tail = Vec::with_capacity(tail_len as usize);
    f.by_ref().take(tail_len).read_to_end(&mut tail).map_err(read)?;
    let Some((start, block)) = find_block(&tail) else {
        return Ok((Signature::Unsigned, len));
    };
    let signed = parse_signed_data(block)?;
    let content_len = len - tail_len + start as u64;
    if !ends_archive(&mut f, content_len).map_err(read)? {
        return Err(SignatureError::NotAfterArchive);
    }
    f.seek(SeekFrom::Start(0)).map_err(read)?;
    let digest = hash(signed.digest, f.take(content_len)).map_err(read)?;
    if digest != signed.message_digest {
        return Err(SignatureError::Changed);
    }
    let cert_der = CertificateDer::from(signed.signer_cert.raw);
    let cert =
        webpki::EndEntityCert::try_from(&cert_der).map_err(|_| SignatureError::Damaged("unreadable certificate"))?;
    let candidates = algorithms(signed.signature_family, signed.digest);
    if !candidates.iter().any(|a| cert.verify_signature(*a, &signed.signed_attrs, signed.signature).is_ok()) {
        return Err(SignatureError::BadSignature);
    }
    let signer = signed.signer_cert.signer();
    if signed.signer_cert.issuer == signed.signer_cert.subject {
        return Ok((Signature::SelfSigned { signer }, content_len));
    }
    let intermediates: Vec<CertificateDer<'_>> = signed
        .certificates
        .iter()
        .filter(|c| c.raw != signed.signer_cert.raw)
        .map(|c| CertificateDer::from(c.raw))
        .collect();
    // The signer's certificate must name code signing; a CA's constrains only when it names any.
    let chain = cert.verify_for_usage(
        webpki::ALL_VERIFICATION_ALGS,
        roots,
        &intermediates,
        UnixTime::now(),
        webpki::KeyUsage::required_if_present(EKU_CODE_SIGNING),
        None,
        None,
    );
    let signature = match chain {
        Ok(_) if !signed.signer_cert.code_signing => Signature::Untrusted { signer, reason: Distrust::NotForCode },
        Ok(_) => Signature::Signed { signer },
        Err(e) => Signature::Untrusted { signer, reason: untrusted_reason(&e) },
    };
    Ok((signature, content_len))
}

/// Whether the first `len` bytes of `f` end with a zip's end-of-central-directory
/// record (22 bytes and its comment, which may be up to 64 KiB).
fn ends_archive(f: &mut File, len: u64) -> std::io::Result<bool> {
    const EOCD: &[u8] = b"PK\x05\x06";
    const EOCD_LEN: usize = 22;
    let window = len.min(EOCD_LEN as u64 + u16::MAX as u64);
    f.seek(SeekFrom::Start(len - window))?;
    let mut tail = Vec::with_capacity(window as usize);
    f.by_ref().take(window).read_to_end(&mut tail)?;
    Ok((0..tail.len().saturating_sub(EOCD_LEN - 1)).rev().any(|at| {
        let comment = u16::from_le_bytes([tail[at + 20], tail[at + 21]]) as usize;
        tail[at..].starts_with(EOCD) && at + EOCD_LEN + comment == tail.len()
    }))
}

/// The roots this computer trusts (`SSL_CERT_FILE`/`SSL_CERT_DIR` when set,
/// as for TLS), read once.
pub fn system_roots() -> &'static [TrustAnchor<'static>] {
    static ROOTS: OnceLock<Vec<TrustAnchor<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        rustls_native_certs::load_native_certs()
            .certs
            .iter()
            .filter_map(|c| webpki::anchor_from_trusted_cert(c).ok().map(|a| a.to_owned()))
            .collect()
    })
}

fn untrusted_reason(e: &webpki::Error) -> Distrust {
    use webpki::Error as E;
    match e {
        E::UnknownIssuer => Distrust::UnknownIssuer,
        E::CertExpired { .. } => Distrust::Expired,
        E::CertNotValidYet { .. } => Distrust::NotYetValid,
        E::RequiredEkuNotFoundContext(_) => Distrust::NotForCode,
        E::CertRevoked => Distrust::Revoked,
        other => {
            tracing::info!(error = %other, "a bundle's signing certificate chain does not verify");
            Distrust::BadChain
        }
    }
}

/// The signature block at the end of `tail`: where it starts, and the DER.
fn find_block(tail: &[u8]) -> Option<(usize, &[u8])> {
    let footer = tail.len().checked_sub(FOOTER.len()).filter(|&at| &tail[at..] == FOOTER)?;
    let mut search = &tail[..footer];
    while let Some(at) = search.windows(HEADER.len()).rposition(|w| w == HEADER) {
        let body = at + HEADER.len() + 4;
        if let Some(len) = tail.get(at + HEADER.len()..body).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize)
            && body + len == footer
        {
            return Some((at, &tail[body..footer]));
        }
        search = &tail[..at];
    }
    None
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum DigestKind {
    Sha256,
    Sha384,
    Sha512,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    Rsa,
    Ecdsa,
    Ed25519,
}

fn hash(kind: DigestKind, mut content: impl Read) -> std::io::Result<Vec<u8>> {
    fn run<D: Digest>(mut d: D, content: &mut impl Read) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; 64 << 10];
        loop {
            match content.read(&mut buf)? {
                0 => return Ok(d.finalize().to_vec()),
                n => d.update(&buf[..n]),
            }
        }
    }
    match kind {
        DigestKind::Sha256 => run(sha2::Sha256::new(), &mut content),
        DigestKind::Sha384 => run(sha2::Sha384::new(), &mut content),
        DigestKind::Sha512 => run(sha2::Sha512::new(), &mut content),
    }
}

/// The webpki algorithms a signature of `family` over `digest` can be.
fn algorithms(family: Family, digest: DigestKind) -> Vec<&'static dyn SignatureVerificationAlgorithm> {
    match (family, digest) {
        (Family::Rsa, DigestKind::Sha256) => vec![alg::RSA_PKCS1_2048_8192_SHA256],
        (Family::Rsa, DigestKind::Sha384) => vec![alg::RSA_PKCS1_2048_8192_SHA384],
        (Family::Rsa, DigestKind::Sha512) => vec![alg::RSA_PKCS1_2048_8192_SHA512],
        (Family::Ecdsa, DigestKind::Sha256) => {
            vec![alg::ECDSA_P256_SHA256, alg::ECDSA_P384_SHA256, alg::ECDSA_P521_SHA256]
        }
        (Family::Ecdsa, DigestKind::Sha384) => {
            vec![alg::ECDSA_P256_SHA384, alg::ECDSA_P384_SHA384, alg::ECDSA_P521_SHA384]
        }
        (Family::Ecdsa, DigestKind::Sha512) => {
            vec![alg::ECDSA_P256_SHA512, alg::ECDSA_P384_SHA512, alg::ECDSA_P521_SHA512]
        }
        (Family::Ed25519, _) => vec![alg::ED25519],
    }
}

/// The parts of a CMS `SignedData` that the checks use.
struct SignedData<'a> {
    certificates: Vec<Cert<'a>>,
    signer_cert: Cert<'a>,
    digest: DigestKind,
    /// The signed attributes as the signature covers them (a DER `SET`).
    signed_attrs: Vec<u8>,
    message_digest: &'a [u8],
    signature_family: Family,
    signature: &'a [u8],
}

fn parse_signed_data(der: &[u8]) -> Result<SignedData<'_>, SignatureError> {
    use SignatureError::Damaged;
    let mut block = Reader::new(der);
    let mut info = block.expect(SEQUENCE)?.reader();
    if !block.is_empty() {
        return Err(Damaged("it holds more than the signature"));
    }
    if info.expect(OID)?.body != OID_SIGNED_DATA {
        return Err(Damaged("not a PKCS#7 signature"));
    }
    let mut sd = info.expect(0xa0)?.reader().expect(SEQUENCE)?.reader();
    sd.expect(INTEGER)?;
    sd.expect(SET)?;
    let mut content = sd.expect(SEQUENCE)?.reader();
    content.expect(OID)?;
    if !content.is_empty() {
        return Err(SignatureError::Unsupported("an embedded (not detached) content"));
    }
    let mut certificates = Vec::new();
    if let Some(set) = sd.next_if(0xa0)? {
        let mut certs = set.reader();
        while !certs.is_empty() {
            let cert = certs.next()?;
            if cert.tag == SEQUENCE {
                certificates.push(Cert::parse(cert)?);
            }
        }
    }
    sd.next_if(0xa1)?;
    let mut signer = sd.expect(SET)?.reader().expect(SEQUENCE)?.reader();
    signer.expect(INTEGER)?;
    let sid = signer.next()?;
    let digest = match signer.expect(SEQUENCE)?.reader().expect(OID)?.body {
        OID_SHA256 => DigestKind::Sha256,
        OID_SHA384 => DigestKind::Sha384,
        OID_SHA512 => DigestKind::Sha512,
        _ => return Err(SignatureError::Unsupported("a digest other than SHA-2")),
    };
    let attrs = signer.next_if(0xa0)?.ok_or(SignatureError::Unsupported("no signed attributes"))?;
    let message_digest = message_digest(attrs)?;
    let signature_family = match signer.expect(SEQUENCE)?.reader().expect(OID)?.body {
        oid if oid.starts_with(OID_RSA_ARC) => Family::Rsa,
        oid if oid.starts_with(OID_ECDSA_ARC) => Family::Ecdsa,
        OID_ED25519 => Family::Ed25519,
        _ => return Err(SignatureError::Unsupported("an unknown signature algorithm")),
    };
    let signature = signer.expect(OCTET_STRING)?.body;
    let signer_cert = match sid.tag {
        SEQUENCE => {
            let mut issuer_serial = sid.reader();
            let (issuer, serial) = (issuer_serial.expect(SEQUENCE)?.raw, issuer_serial.expect(INTEGER)?.body);
            certificates.iter().find(|c| c.issuer == issuer && c.serial == serial)
        }
        // A subject key identifier: the first certificate is the signer's, as `mcpb` writes it.
        _ => certificates.first(),
    }
    .cloned()
    .ok_or(Damaged("the signer's certificate is not included"))?;
    // The signature covers the attributes encoded as a SET, not as the [0] they are stored in.
    let mut signed_attrs = attrs.raw.to_vec();
    signed_attrs[0] = SET;
    Ok(SignedData { certificates, signer_cert, digest, signed_attrs, message_digest, signature_family, signature })
}

fn message_digest<'a>(attrs: Tlv<'a>) -> Result<&'a [u8], SignatureError> {
    let mut attrs = attrs.reader();
    while !attrs.is_empty() {
        let mut attr = attrs.expect(SEQUENCE)?.reader();
        if attr.expect(OID)?.body == OID_MESSAGE_DIGEST {
            return Ok(attr.expect(SET)?.reader().expect(OCTET_STRING)?.body);
        }
    }
    Err(SignatureError::Damaged("no messageDigest attribute"))
}

/// A certificate's fields that say who it is.
#[derive(Clone)]
struct Cert<'a> {
    raw: &'a [u8],
    serial: &'a [u8],
    issuer: &'a [u8],
    subject: &'a [u8],
    not_before: String,
    not_after: String,
    /// Whether its extended key usage lists code signing.
    code_signing: bool,
}

impl<'a> Cert<'a> {
    fn parse(cert: Tlv<'a>) -> Result<Self, SignatureError> {
        let mut tbs = cert.reader().expect(SEQUENCE)?.reader();
        tbs.next_if(0xa0)?;
        let serial = tbs.expect(INTEGER)?.body;
        tbs.expect(SEQUENCE)?;
        let issuer = tbs.expect(SEQUENCE)?.raw;
        let mut validity = tbs.expect(SEQUENCE)?.reader();
        let not_before = date(validity.next()?)?;
        let not_after = date(validity.next()?)?;
        let subject = tbs.expect(SEQUENCE)?.raw;
        tbs.expect(SEQUENCE)?;
        tbs.next_if(0x81)?;
        tbs.next_if(0x82)?;
        let code_signing = match tbs.next_if(0xa3)? {
            Some(extensions) => lists_code_signing(extensions)?,
            None => false,
        };
        Ok(Self { raw: cert.raw, serial, issuer, subject, not_before, not_after, code_signing })
    }

    fn signer(&self) -> Signer {
        Signer {
            publisher: name(self.subject),
            issuer: name(self.issuer),
            valid_from: self.not_before.clone(),
            valid_to: self.not_after.clone(),
            fingerprint: hex::encode(sha2::Sha256::digest(self.raw)),
        }
    }
}

/// Whether a certificate's `[3]` extensions hold an extended key usage that
/// lists code signing.
fn lists_code_signing(extensions: Tlv<'_>) -> Result<bool, SignatureError> {
    let mut list = extensions.reader().expect(SEQUENCE)?.reader();
    while !list.is_empty() {
        let mut extension = list.expect(SEQUENCE)?.reader();
        if extension.expect(OID)?.body != OID_EXTENDED_KEY_USAGE {
            continue;
        }
        extension.next_if(0x01)?;
        let mut purposes = Reader::new(extension.expect(OCTET_STRING)?.body).expect(SEQUENCE)?.reader();
        while !purposes.is_empty() {
            if purposes.expect(OID)?.body == EKU_CODE_SIGNING {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// A `UTCTime` or `GeneralizedTime` as `YYYY-MM-DD`.
fn date(time: Tlv<'_>) -> Result<String, SignatureError> {
    let text = std::str::from_utf8(time.body).map_err(|_| SignatureError::Damaged("a date is not text"))?;
    let full = match time.tag {
        0x17 if text.len() >= 6 => {
            let century = if text[..2].parse::<u8>().unwrap_or(0) >= 50 { "19" } else { "20" };
            format!("{century}{text}")
        }
        0x18 if text.len() >= 8 => text.to_owned(),
        _ => return Err(SignatureError::Damaged("a certificate date is not a time")),
    };
    if !full[..8].bytes().all(|b| b.is_ascii_digit()) {
        return Err(SignatureError::Damaged("a certificate date is not a time"));
    }
    Ok(format!("{}-{}-{}", &full[..4], &full[4..6], &full[6..8]))
}

/// A distinguished name's common name, or its organisation, or "unknown".
fn name(der: &[u8]) -> String {
    let mut found = (None, None);
    let mut rdns = Reader::new(der).expect(SEQUENCE).map(|n| n.reader()).unwrap_or(Reader::new(&[]));
    while let Ok(rdn) = rdns.expect(SET) {
        let mut atvs = rdn.reader();
        while let Ok(atv) = atvs.expect(SEQUENCE) {
            let mut atv = atv.reader();
            let (Ok(oid), Ok(value)) = (atv.expect(OID), atv.next()) else { continue };
            let text = match value.tag {
                // BMPString: UTF-16 big-endian.
                0x1e => String::from_utf16_lossy(
                    &value.body.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect::<Vec<_>>(),
                ),
                _ => String::from_utf8_lossy(value.body).into_owned(),
            };
            match oid.body {
                OID_COMMON_NAME => found.0 = Some(text),
                OID_ORGANIZATION => found.1 = Some(text),
                _ => {}
            }
        }
    }
    found.0.or(found.1).unwrap_or_else(|| "unknown".into())
}

const INTEGER: u8 = 0x02;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;

/// One DER element: its tag, its contents, and all of its bytes.
#[derive(Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
    raw: &'a [u8],
}

impl<'a> Tlv<'a> {
    fn reader(self) -> Reader<'a> {
        Reader::new(self.body)
    }
}

/// Reads DER elements one after the other (single-byte tags, definite lengths).
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(der: &'a [u8]) -> Self {
        Self { rest: der }
    }

    fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn next(&mut self) -> Result<Tlv<'a>, SignatureError> {
        let bad = SignatureError::Damaged("malformed DER");
        let (&tag, after) = self.rest.split_first().ok_or(bad.clone())?;
        if tag & 0x1f == 0x1f {
            return Err(bad);
        }
        let (&first, mut after) = after.split_first().ok_or(bad.clone())?;
        let len = if first < 0x80 {
            first as usize
        } else {
            let n = (first & 0x7f) as usize;
            if n == 0 || n > 4 || after.len() < n {
                return Err(bad);
            }
            let len = after[..n].iter().fold(0usize, |acc, b| acc << 8 | *b as usize);
            after = &after[n..];
            len
        };
        if after.len() < len {
            return Err(bad);
        }
        let header = self.rest.len() - after.len();
        let raw = &self.rest[..header + len];
        self.rest = &after[len..];
        Ok(Tlv { tag, body: &after[..len], raw })
    }

    fn expect(&mut self, tag: u8) -> Result<Tlv<'a>, SignatureError> {
        match self.next()? {
            tlv if tlv.tag == tag => Ok(tlv),
            _ => Err(SignatureError::Damaged("unexpected DER element")),
        }
    }

    fn next_if(&mut self, tag: u8) -> Result<Option<Tlv<'a>>, SignatureError> {
        if self.rest.first() == Some(&tag) { self.next().map(Some) } else { Ok(None) }
    }
}
