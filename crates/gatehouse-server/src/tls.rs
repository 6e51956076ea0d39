//! HTTPS for a server reached over the network: the certificate and key
//! that `serve --tls-cert/--tls-key` name, read and checked before the
//! server binds (an unusable file is an error naming it, never a panic),
//! offered for HTTP/1.1 and HTTP/2 (ALPN); the accept loop is
//! [`crate::connections`]'s. rustls runs on the ring provider, chosen here rather than taken
//! from a process-wide default, so another rustls user in the process
//! (reqwest for webhooks and providers) cannot make it ambiguous.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A certificate chain and its key, ready to serve.
#[derive(Clone)]
pub struct TlsConfig {
    cert: PathBuf,
    key: PathBuf,
    server: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        f.debug_struct("TlsConfig").field("cert", &self.cert).field("key", &self.key).finish_non_exhaustive()
    }
}

/// Why a certificate or key cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The file cannot be read.
    #[error("cannot read the TLS {what} {}: {source}", .path.display())]
    Read {
        /// `certificate` or `private key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not well-formed PEM.
    #[error("the TLS {what} {} is not valid PEM: {reason}", .path.display())]
    Pem {
        /// `certificate` or `private key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The certificate file holds no certificate.
    #[error(
        "no certificate (-----BEGIN CERTIFICATE-----) in {}; --tls-cert takes a PEM file with the server's \
         certificate first, then any intermediates",
        .0.display()
    )]
    NoCertificate(PathBuf),
    /// The key file holds no usable key.
    #[error(
        "no private key in {}; --tls-key takes an unencrypted PEM key (BEGIN PRIVATE KEY, BEGIN RSA PRIVATE KEY \
         or BEGIN EC PRIVATE KEY)",
        .0.display()
    )]
    NoKey(PathBuf),
    /// The key is not the certificate's.
    #[error("the private key in {} does not belong to the certificate in {}", .key.display(), .cert.display())]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
    },
    /// rustls refused the pair (an unsupported key type, a malformed certificate).
    #[error("cannot serve TLS with the certificate {} and the key {}: {reason}", .cert.display(), .key.display())]
    Unusable {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        reason: String,
    },
}

impl TlsConfig {
    /// Reads a PEM certificate chain (the server's certificate first) and
    /// its PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(cert: impl AsRef<Path>, key: impl AsRef<Path>) -> Result<Self, TlsError> {
        let (cert, key) = (cert.as_ref().to_path_buf(), key.as_ref().to_path_buf());
        let read = |what, path: &PathBuf| {
            std::fs::read(path).map_err(|source| TlsError::Read { what, path: path.clone(), source })
        };
        let bad_pem =
            |what, path: &PathBuf, e: pem::Error| TlsError::Pem { what, path: path.clone(), reason: e.to_string() };

        let chain = CertificateDer::pem_slice_iter(&read("certificate", &cert)?)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad_pem("certificate", &cert, e))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate(cert));
        }
        let private = match PrivateKeyDer::from_pem_slice(&read("private key", &key)?) {
            Ok(private) => private,
            Err(pem::Error::NoItemsFound) => return Err(TlsError::NoKey(key)),
            Err(e) => return Err(bad_pem("private key", &key, e)),
        };

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let unusable = |e: rustls::Error| match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                TlsError::Mismatch { cert: cert.clone(), key: key.clone() }
            }
            other => TlsError::Unusable { cert: cert.clone(), key: key.clone(), reason: other.to_string() },
        };
        let mut server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(unusable)?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(unusable)?;
        server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self { cert, key, server: Arc::new(server) })
    }

    /// The certificate file.
    pub fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// The acceptor for connections ([`crate::connections`] runs the accept loop).
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.server))
    }
}
