package parquet

// BYTE_STREAM_SPLIT pages (Encodings.md): the values' k-th bytes are
// stored together, one stream per byte of the width, so that a codec
// finds the exponent bytes of floats side by side. Value i's byte k is at
// k*stride+i, where the stride is the page's bytes over the width (the
// number of values it stores; Arrow C++ and arrow-go read it so).

// decodeByteStreamSplit decodes n values of width bytes from body into
// PLAIN layout in out, which holds n*width bytes.
func decodeByteStreamSplit(body []byte, n, width int, out []byte) error {
	if width <= 0 || len(body)%width != 0 || len(body)/width < n || len(out) < n*width {
		return corrupt("byte-stream-split page of %d bytes for %d values of %d bytes", len(body), n, width)
	}
	stride := len(body) / width
	switch width {
	case 4:
		s0, s1, s2, s3 := body[:n], body[stride:stride+n], body[2*stride:2*stride+n], body[3*stride:3*stride+n]
		o := out[:4*n]
		for i := range n {
			o[4*i], o[4*i+1], o[4*i+2], o[4*i+3] = s0[i], s1[i], s2[i], s3[i]
		}
	case 8:
		o := out[:8*n]
		for k := range 8 {
			s := body[k*stride : k*stride+n]
			for i, b := range s {
				o[8*i+k] = b
			}
		}
	default:
		for k := range width {
			s := body[k*stride : k*stride+n]
			for i, b := range s {
				out[width*i+k] = b
			}
		}
	}
	return nil
}
