/*
 * tls.c: see tls.h.
 */
#include "tls.h"
#include "../error.h"
#include "../util.h"
#include <openssl/err.h>
#include <openssl/ssl.h>

struct serve_tls {
	SSL_CTX *ctx;
};

static const char *ssl_reason(void)
{
	unsigned long e = ERR_get_error();
	return e ? ERR_reason_error_string(e) : "unknown error";
}

/* ALPN: HTTP/1.1 is all this server speaks. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char h11[] = "\x08http/1.1";
	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto((unsigned char **)out, outlen, h11, sizeof(h11) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	return SSL_TLSEXT_ERR_OK;
}

int serve_tls_open(struct serve_tls **out, const char *cert_file, const char *key_file,
		   struct gp_error *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	struct serve_tls *tls;

	if (!ctx)
		return gp_error_set(err, GP_EINVAL, "TLS: %s", ssl_reason());
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* idle keep-alive connections should not hold 34 KiB of buffers each */
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		SSL_CTX_free(ctx);
		return gp_error_set(err, GP_EINVAL, "TLS certificate '%s': %s", cert_file,
				    ssl_reason());
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		SSL_CTX_free(ctx);
		return gp_error_set(err, GP_EINVAL, "TLS key '%s': %s", key_file, ssl_reason());
	}
	tls = xcalloc(1, sizeof(*tls));
	tls->ctx = ctx;
	*out = tls;
	return 0;
}

void serve_tls_free(struct serve_tls *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ctx);
	free(tls);
}

SSL *serve_tls_session(struct serve_tls *tls, int fd)
{
	SSL *ssl = SSL_new(tls->ctx);
	if (!ssl)
		return NULL;
	if (SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

ssize_t serve_tls_read(SSL *ssl, void *buf, size_t len)
{
	int n, e;
	ERR_clear_error();
	n = SSL_read(ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
	if (n > 0)
		return n;
	e = SSL_get_error(ssl, n);
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	/*
	 * A handshake that must write first waits for the next readable
	 * event too: the peer is waiting for those bytes, which a fresh
	 * socket's empty send buffer takes at once in practice.
	 */
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		errno = EAGAIN;
		return -1;
	}
	if (e == SSL_ERROR_SYSCALL && !errno)
		return 0; /* the peer closed without close_notify */
	errno = EPROTO;
	return -1;
}

size_t serve_tls_pending(SSL *ssl)
{
	int n = SSL_pending(ssl);
	return n > 0 ? (size_t)n : 0;
}

int serve_tls_write(SSL *ssl, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		int chunk = len > (1u << 30) ? (1 << 30) : (int)len, n;
		ERR_clear_error();
		n = SSL_write(ssl, p, chunk);
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void serve_tls_end(SSL *ssl)
{
	if (!ssl)
		return;
	SSL_shutdown(ssl);
	SSL_free(ssl);
}
