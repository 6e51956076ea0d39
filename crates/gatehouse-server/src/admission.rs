//! Which hosts a request may name and which browser origins may call,
//! besides loopback, the bound address and the server's own origin (against
//! DNS rebinding and cross-site calls): worked out once from the
//! configuration, checked by the middleware in `auth.rs`.

use std::net::IpAddr;

/// The hosts and browser origins accepted besides loopback, the bound
/// address and the server's own origin; worked out once from the config.
#[derive(Debug, Default)]
pub struct Admission {
    /// The address the server listens on: requests may name it as their host.
    bound: Option<IpAddr>,
    /// Host names, lower case: `--allowed-host` and the public URL's host.
    hosts: Vec<String>,
    /// Origins (`https://name[:port]`), lower case: the public URL's and `--allowed-origin`.
    origins: Vec<String>,
}

impl Admission {
    /// What a server bound to `bound`, with the public URL and the allowed
    /// hosts and origins of its configuration, admits.
    pub fn new(bound: IpAddr, public_url: Option<&str>, allowed_hosts: &[String], allowed_origins: &[String]) -> Self {
        let public = public_url.and_then(|u| reqwest::Url::parse(u.trim()).ok());
        let mut hosts: Vec<String> = allowed_hosts.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
        hosts.extend(public.as_ref().and_then(|u| u.host_str()).map(str::to_ascii_lowercase));
        let mut origins: Vec<String> = public.as_ref().map(|u| u.origin().ascii_serialization()).into_iter().collect();
        // Checked by `serve`'s flags; a config built in code may still hold a sloppy one.
        origins.extend(allowed_origins.iter().map(|o| origin_of(o).unwrap_or_else(|_| o.trim().to_owned())));
        origins.retain(|o| o != "null");
        for origin in &mut origins {
            origin.make_ascii_lowercase();
        }
        Self { bound: Some(bound), hosts, origins }
    }

    /// Whether a request may name `host` (with or without its port):
    /// loopback, the bound address, or an admitted name.
    pub fn host_allowed(&self, host: &str) -> bool {
        let name = match host.rsplit_once(':') {
            Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name,
            _ => host,
        };
        let bound = self.bound.map(|ip| ip.to_string()).unwrap_or_default();
        matches!(name, "localhost" | "127.0.0.1" | "[::1]")
            || (!bound.is_empty() && (name == bound || name.trim_start_matches('[').trim_end_matches(']') == bound))
            || self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Whether a browser calling from `origin` (another than the server's
    /// own) is admitted.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }
}

/// The origin (`scheme://host[:port]`, the default port left out) of an
/// http or https URL, or why it is not one. A path, query or fragment is
/// refused: an origin has none.
pub fn origin_of(text: &str) -> Result<String, String> {
    let url = base_url(text)?;
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err(format!("`{text}` is not an origin: use scheme://host[:port], without a path"));
    }
    Ok(url.origin().ascii_serialization())
}

/// An http or https URL with a host (`--public-url`), or why it is not one.
pub fn base_url(text: &str) -> Result<reqwest::Url, String> {
    let hint = "use http(s)://host[:port], such as https://gatehouse.example.com";
    let url = reqwest::Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL ({e}); {hint}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{text}` is not an http or https URL with a host; {hint}"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port_only() {
        assert_eq!(origin_of("https://ui.example.com").unwrap(), "https://ui.example.com");
        assert_eq!(origin_of("HTTPS://UI.Example.com:443/").unwrap(), "https://ui.example.com", "default port dropped");
        assert_eq!(origin_of("http://10.0.0.5:8080").unwrap(), "http://10.0.0.5:8080");
        for bad in ["ui.example.com", "ftp://ui.example.com", "https://ui.example.com/app", "https://x.com/?a=1", ""] {
            assert!(origin_of(bad).is_err(), "{bad}");
        }
        assert!(base_url("https://gatehouse.example.com/base/").is_ok(), "a public URL may have a path");
        assert!(base_url("mailto:someone@example.com").is_err());
    }

    #[test]
    fn the_public_url_admits_its_host_and_origin() {
        let admitted = Admission::new(
            IpAddr::from([10, 0, 0, 5]),
            Some("https://Gatehouse.Example.com/"),
            &["Proxy.Internal".into()],
            &["https://ui.example.com/".into()],
        );
        assert_eq!(admitted.hosts, ["proxy.internal", "gatehouse.example.com"]);
        assert_eq!(admitted.origins, ["https://gatehouse.example.com", "https://ui.example.com"]);
        assert!(admitted.host_allowed("proxy.internal:8080") && admitted.host_allowed("10.0.0.5:7000"));
        assert!(admitted.host_allowed("localhost") && !admitted.host_allowed("evil.example.com"));
        assert!(
            admitted.origin_allowed("https://UI.example.com") && !admitted.origin_allowed("https://evil.example.com")
        );
    }
}
