# lib-pkt.sh: pkt-lines for tests that talk to upload-pack by hand
# (gitprotocol-common: a 4-hex-digit length, then the payload).

# packetize LINE...: each LINE as a pkt-line with an LF added; "0000",
# "0001" and "0002" are flush, delim and response-end, written as they are.
packetize () {
	for pk_line_
	do
		case "$pk_line_" in
		0000|0001|0002)
			printf '%s' "$pk_line_" ;;
		*)
			printf '%04x%s\n' $((${#pk_line_} + 5)) "$pk_line_" ;;
		esac
	done
}
