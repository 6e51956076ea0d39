//! PostgreSQL over TLS, with rustls (on ring, as the rest of Gatehouse).
//!
//! The connection string carries libpq's settings: `sslmode` (`disable`,
//! `prefer`, `require`, `verify-ca`, `verify-full`) and `sslrootcert` (a PEM
//! file of the certificate authorities to trust, or `system` for the
//! operating system's). tokio-postgres knows only `disable`, `prefer` and
//! `require`, so [`TlsSettings::split`] takes the verifying modes and the
//! root file out of the string before it is parsed, and [`PgTls`] does what
//! they ask during the handshake:
//!
//! - `disable`: no TLS; `prefer` (the default) and `require`: encrypted
//!   when the server offers it (`require`: or not at all), the certificate
//!   unchecked, as libpq does, unless `sslrootcert` names a file, which
//!   makes them check the chain as `verify-ca` does;
//! - `verify-ca`: the certificate must chain to `sslrootcert`;
//! - `verify-full`: that, and it must name the host connected to.
//!
//! A refused certificate fails the connection with a message naming the
//! setting to look at. Channel binding is not offered (SCRAM falls back to
//! its plain form).

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

use crate::error::{EngineError, Result};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self> {
        match value {
            "disable" => Ok(Self::Disable),
            "prefer" => Ok(Self::Prefer),
            "require" => Ok(Self::Require),
            "verify-ca" => Ok(Self::VerifyCa),
            "verify-full" => Ok(Self::VerifyFull),
            "allow" => Err(setting_error("sslmode=allow is not supported; use prefer, require or verify-full")),
            other => Err(setting_error(&format!(
                "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
            ))),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }

    /// The mode tokio-postgres is told: it negotiates, [`PgTls`] verifies.
    fn negotiated(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }
}

fn setting_error(message: &str) -> EngineError {
    EngineError::Storage(format!("the PostgreSQL connection string's {message}"))
}

/// Where the trusted certificate authorities come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    /// None named: a verifying mode cannot start.
    Unset,
    /// `sslrootcert=system`.
    System,
    /// `sslrootcert=PATH`, a PEM file.
    File(PathBuf),
}

/// The TLS settings of a connection string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub(crate) mode: SslMode,
    pub(crate) roots: Roots,
}

impl TlsSettings {
    /// The settings in `url`, and `url` as tokio-postgres may parse it
    /// (`sslrootcert` taken out, a verifying mode negotiated as `require`).
    /// Both forms: `postgres://...?sslmode=verify-full&sslrootcert=/ca.pem`
    /// and `host=... sslmode=verify-full sslrootcert=/ca.pem`.
    pub(crate) fn split(url: &str) -> Result<(String, Self)> {
        let (rest, pairs) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            split_url(url)
        } else {
            split_key_values(url)
        };
        let mut settings = Self { mode: SslMode::Prefer, roots: Roots::Unset };
        for (key, value) in pairs {
            match key.as_str() {
                "sslmode" => settings.mode = SslMode::parse(&value)?,
                "sslrootcert" if value == "system" => settings.roots = Roots::System,
                "sslrootcert" if value.is_empty() => settings.roots = Roots::Unset,
                "sslrootcert" => settings.roots = Roots::File(PathBuf::from(value)),
                _ => {}
            }
        }
        let joined = append_setting(&rest, "sslmode", settings.mode.negotiated());
        Ok((joined, settings))
    }

    /// The connector for these settings, its roots read now, so a missing or
    /// unreadable `sslrootcert` stops the start.
    pub(crate) fn connector(&self) -> Result<PgTls> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match (self.mode, &self.roots) {
            (SslMode::Disable, _) => return Ok(PgTls { config: None, mode: self.mode }),
            (SslMode::Prefer | SslMode::Require, Roots::Unset | Roots::System) => {
                Arc::new(Unchecked(Arc::clone(&provider)))
            }
            (SslMode::VerifyCa | SslMode::VerifyFull, Roots::Unset) => {
                return Err(setting_error(&format!(
                    "sslmode={} needs sslrootcert=PATH (a PEM file of the certificate authority that signed the \
                     server's certificate) or sslrootcert=system",
                    self.mode.as_str()
                )))
            }
            (mode, roots) => {
                let store = Arc::new(load_roots(roots)?);
                let webpki = WebPkiServerVerifier::builder_with_provider(store, Arc::clone(&provider))
                    .build()
                    .map_err(|e| setting_error(&format!("sslrootcert cannot be used: {e}")))?;
                if mode == SslMode::VerifyFull {
                    webpki
                } else {
                    Arc::new(AnyName(webpki))
                }
            }
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| EngineError::Storage(format!("cannot set up TLS for PostgreSQL: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(PgTls { config: Some(Arc::new(config)), mode: self.mode })
    }
}

/// `url` split into itself without `sslmode` and `sslrootcert`, and those two (decoded).
fn split_url(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else { return (url.to_owned(), Vec::new()) };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for piece in query.split('&').filter(|p| !p.is_empty()) {
        let decoded = url::form_urlencoded::parse(piece.as_bytes()).next();
        match decoded {
            Some((key, value)) if key == "sslmode" || key == "sslrootcert" => {
                taken.push((key.into_owned(), value.into_owned()))
            }
            _ => kept.push(piece),
        }
    }
    let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
    (rest, taken)
}

/// As [`split_url`], for `key=value` pairs separated by spaces (values may
/// be single-quoted, with backslash escapes).
fn split_key_values(text: &str) -> (String, Vec<(String, String)>) {
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    let mut chars = text.char_indices().peekable();
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else { break };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if(|(_, c)| *c == '=').is_some() {
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
            if chars.next_if(|(_, c)| *c == '\'').is_some() {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '\'' => break,
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        c => value.push(c),
                    }
                }
            } else {
                while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace()) {
                    if c == '\\' {
                        value.extend(chars.next().map(|(_, c)| c));
                    } else {
                        value.push(c);
                    }
                }
            }
        }
        let end = chars.peek().map_or(text.len(), |(i, _)| *i);
        if key == "sslmode" || key == "sslrootcert" {
            taken.push((key, value));
        } else {
            kept.push(&text[start..end]);
        }
    }
    (kept.iter().map(|p| p.trim_end()).collect::<Vec<_>>().join(" "), taken)
}

/// `rest` with `key=value` added, in its own form.
fn append_setting(rest: &str, key: &str, value: &str) -> String {
    if rest.starts_with("postgres://") || rest.starts_with("postgresql://") {
        let joint = if rest.contains('?') { '&' } else { '?' };
        format!("{rest}{joint}{key}={value}")
    } else if rest.trim().is_empty() {
        format!("{key}={value}")
    } else {
        format!("{rest} {key}={value}")
    }
}

/// The certificate authorities `roots` names.
fn load_roots(roots: &Roots) -> Result<RootCertStore> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::Unset => {}
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(setting_error("sslrootcert=system found no certificate authorities on this system"));
            }
        }
        Roots::File(path) => {
            let shown = path.display();
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
                .map_err(|e| setting_error(&format!("sslrootcert={shown} cannot be read as PEM certificates: {e}")))?;
            let (added, _) = store.add_parsable_certificates(certs);
            if added == 0 {
                return Err(setting_error(&format!("sslrootcert={shown} holds no usable certificate")));
            }
        }
    }
    Ok(store)
}

/// `prefer` and `require` without `sslrootcert`: encrypted, the
/// certificate taken as it is (libpq's meaning); the handshake's signatures
/// are still checked, so the session key belongs to whoever holds the
/// certificate's key.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted authority, whatever host it names.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// tokio-postgres's TLS connector over tokio-rustls.
#[derive(Clone)]
pub(crate) struct PgTls {
    /// `None` for `disable` (tokio-postgres then never asks for TLS).
    config: Option<Arc<ClientConfig>>,
    mode: SslMode,
}

/// One connection's handshake, for the host it connects to.
pub(crate) struct PgTlsConnect {
    config: Option<Arc<ClientConfig>>,
    host: String,
    mode: SslMode,
}

impl<S> MakeTlsConnect<S> for PgTls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = PgTlsStream<S>;
    type TlsConnect = PgTlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, host: &str) -> io::Result<PgTlsConnect> {
        Ok(PgTlsConnect { config: self.config.clone(), host: host.to_owned(), mode: self.mode })
    }
}

impl<S> TlsConnect<S> for PgTlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = PgTlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<PgTlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let Some(config) = self.config else {
                return Err(io::Error::other("TLS is off (sslmode=disable)"));
            };
            let name = ServerName::try_from(self.host.clone())
                .map_err(|_| io::Error::other(format!("`{}` is not a host name TLS can check", self.host)))?;
            let connector = tokio_rustls::TlsConnector::from(config);
            match connector.connect(name, stream).await {
                Ok(stream) => Ok(PgTlsStream(Box::new(stream))),
                // A refusal (the certificate, the protocol) is `Other`, a
                // setting to fix; a connection that broke mid-handshake (the
                // server going down) keeps its kind, an outage to wait out.
                Err(e) => {
                    let refused = e.get_ref().is_some_and(|cause| cause.is::<rustls::Error>());
                    let kind = if refused { io::ErrorKind::Other } else { e.kind() };
                    Err(io::Error::new(kind, explain(&e, &self.host, self.mode)))
                }
            }
        })
    }
}

/// A refused handshake, naming the setting to look at.
fn explain(error: &io::Error, host: &str, mode: SslMode) -> String {
    let cause = error.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>());
    let mode = mode.as_str();
    match cause {
        Some(rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer)) => {
            format!("the server's certificate is not signed by a certificate authority in sslrootcert (sslmode={mode})")
        }
        Some(rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        )) => format!(
            "the server's certificate is not valid for the host name `{host}` (sslmode={mode} checks it; connect \
             by a name the certificate lists)"
        ),
        Some(rustls::Error::InvalidCertificate(other)) => {
            format!("the server's certificate was refused: {other:?} (sslmode={mode}, sslrootcert)")
        }
        _ => format!("the TLS handshake failed: {error} (sslmode={mode})"),
    }
}

/// A TLS connection to PostgreSQL (boxed: the handshake state is large).
pub(crate) struct PgTlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for PgTlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for PgTlsStream<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for PgTlsStream<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.get_mut().0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_loses_the_settings_tokio_postgres_does_not_know() {
        let (rest, settings) = TlsSettings::split(
            "postgres://u@db.example:5432/g?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(rest, "postgres://u@db.example:5432/g?application_name=x&sslmode=require");
        assert_eq!(settings, TlsSettings { mode: SslMode::VerifyFull, roots: Roots::File("/etc/ca.pem".into()) });
    }

    #[test]
    fn key_values_keep_their_other_settings_and_quoting() {
        let (rest, settings) =
            TlsSettings::split("host=db user='a b' sslrootcert='/my ca.pem' sslmode = verify-ca dbname=g").unwrap();
        assert_eq!(rest, "host=db user='a b' dbname=g sslmode=require");
        assert_eq!(settings, TlsSettings { mode: SslMode::VerifyCa, roots: Roots::File("/my ca.pem".into()) });
    }

    #[test]
    fn no_setting_means_prefer_and_disable_stays_disable() {
        let (rest, settings) = TlsSettings::split("postgres://u@h/g").unwrap();
        assert_eq!((rest.as_str(), settings.mode), ("postgres://u@h/g?sslmode=prefer", SslMode::Prefer));
        let (rest, settings) = TlsSettings::split("postgres://u@h/g?sslmode=disable").unwrap();
        assert_eq!((rest.as_str(), settings.mode), ("postgres://u@h/g?sslmode=disable", SslMode::Disable));
    }

    #[test]
    fn an_unknown_mode_or_a_verifying_one_without_roots_names_the_setting() {
        let error = TlsSettings::split("postgres://u@h/g?sslmode=verify_full").unwrap_err().to_string();
        assert!(error.contains("sslmode=verify_full"), "{error}");
        let (_, settings) = TlsSettings::split("postgres://u@h/g?sslmode=verify-full").unwrap();
        let error = settings.connector().err().expect("refused").to_string();
        assert!(error.contains("sslrootcert"), "{error}");
        let (_, settings) =
            TlsSettings::split("postgres://u@h/g?sslmode=verify-full&sslrootcert=/nowhere.pem").unwrap();
        let error = settings.connector().err().expect("refused").to_string();
        assert!(error.contains("sslrootcert=/nowhere.pem"), "{error}");
    }
}
