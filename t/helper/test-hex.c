/*
 * test-hex.c: test-tool hex, for util.h's word-at-a-time hex routines.
 *
 *   test-tool hex
 *
 * Checks hex_to_bytes(), hex_scan() and bytes_to_hex() against a
 * byte-at-a-time model written here: every byte value at every digit
 * position of a 40- and a 64-digit id (in lower, upper and mixed case),
 * odd lengths that leave a tail, and random bytes to encode. Prints
 * "ok <cases>", or each disagreement and exits 1.
 */
#include "../../util.h"
#include "test-tool.h"

static int model_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* hex_to_bytes() and hex_scan() of the 2n digits at hex, as the models say */
static int check_decode(const char *hex, size_t n)
{
	unsigned char want[64], got[64];
	int want_ret = 0, want_scan = 0, fails = 0;

	for (size_t i = 0; i < 2 * n; i++) {
		int d = model_digit((unsigned char)hex[i]);
		if (d < 0) {
			want_ret = -1;
			want_scan = -1;
			continue;
		}
		if (want_scan >= 0 && hex[i] >= 'A' && hex[i] <= 'F')
			want_scan = 1;
		if (i % 2)
			want[i / 2] |= (unsigned char)d;
		else
			want[i / 2] = (unsigned char)(d << 4);
	}
	if (hex_to_bytes(got, hex, n) != want_ret || (!want_ret && memcmp(got, want, n))) {
		printf("hex_to_bytes('%.*s', %zu) disagrees\n", (int)(2 * n), hex, n);
		fails++;
	}
	if (hex_scan(hex, 2 * n) != want_scan) {
		printf("hex_scan('%.*s') = %d, not %d\n", (int)(2 * n), hex, hex_scan(hex, 2 * n),
		       want_scan);
		fails++;
	}
	return fails;
}

static int check_encode(const unsigned char *raw, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char want[129], got[129];
	for (size_t i = 0; i < n; i++) {
		want[2 * i] = digits[raw[i] >> 4];
		want[2 * i + 1] = digits[raw[i] & 0xf];
	}
	bytes_to_hex(got, raw, n);
	if (memcmp(got, want, 2 * n)) {
		printf("bytes_to_hex of %zu bytes gave '%.*s', not '%.*s'\n", n, (int)(2 * n), got,
		       (int)(2 * n), want);
		return 1;
	}
	return 0;
}

int cmd__hex(int argc, const char **argv)
{
	static const char *const alphabets[] = { "0123456789abcdef", "0123456789ABCDEF",
						 "0123456789abcdefABCDEF" };
	static const size_t lengths[] = { 20, 32, 1, 3, 5, 21, 33 };
	unsigned long cases = 0, fails = 0, seed = 1;
	char hex[128];

	if (argc != 1) {
		fprintf(stderr, "usage: test-tool hex\n");
		return 129;
	}
	for (size_t a = 0; a < ARRAY_SIZE(alphabets); a++) {
		size_t alen = strlen(alphabets[a]);
		for (size_t l = 0; l < ARRAY_SIZE(lengths); l++) {
			size_t n = lengths[l];
			for (size_t pos = 0; pos < 2 * n; pos++) {
				for (int v = 0; v < 256; v++) {
					for (size_t k = 0; k < 2 * n; k++)
						hex[k] = alphabets[a][(k * 7 + (size_t)v) % alen];
					hex[pos] = (char)v;
					fails += check_decode(hex, n);
					cases++;
				}
			}
		}
	}
	for (int t = 0; t < 20000; t++) {
		unsigned char raw[64];
		for (size_t i = 0; i < sizeof(raw); i++) {
			seed = seed * 6364136223846793005UL + 1442695040888963407UL;
			raw[i] = (unsigned char)(seed >> 56);
		}
		for (size_t l = 0; l < ARRAY_SIZE(lengths); l++) {
			fails += check_encode(raw, lengths[l]);
			cases++;
		}
	}
	if (fails)
		return 1;
	printf("ok %lu\n", cases);
	return 0;
}
