package dataset

import (
	"sync"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// Arrow's Parquet writer asks its zstd codec for a brand-new encoder for
// every page it compresses at an explicit level, and each encoder allocates
// its history window: on large outputs that costs more than the compression
// itself. cachedZstd keeps one encoder per level instead (EncodeAll is safe
// for concurrent use) and otherwise defers to Arrow's codec.
type cachedZstd struct {
	compress.Codec
	mu   sync.Mutex
	encs map[int]*zstd.Encoder

	decOnce sync.Once
	dec     *zstd.Decoder
}

func (c *cachedZstd) encoder(level int) *zstd.Encoder {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.encs[level]; ok {
		return e
	}
	speed := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		speed = zstd.EncoderLevelFromZstd(level)
	}
	e, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(speed))
	if err != nil {
		return nil
	}
	c.encs[level] = e
	return e
}

func (c *cachedZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if e := c.encoder(level); e != nil {
		return e.EncodeAll(src, dst[:0])
	}
	return c.Codec.EncodeLevel(dst, src, level)
}

// Decode is Arrow's zstd decoding without its panic on damaged data: the
// Parquet reader decodes nested columns on goroutines of its own, where a
// panic cannot be recovered and would end the process. The page reader
// checks the decoded length against the page header, whose uncompressed
// size is len(dst), so on failure a result one byte longer than dst makes
// it fail with an error. Frames that claim to hold more than that are not
// decoded.
func (c *cachedZstd) Decode(dst, src []byte) []byte {
	var h zstd.Header
	if len(dst) > 0 && h.Decode(src) == nil && h.HasFCS && h.FrameContentSize > uint64(len(dst)) {
		return make([]byte, len(dst)+1)
	}
	d := c.decoder()
	if d == nil {
		return c.Codec.Decode(dst, src)
	}
	out, err := d.DecodeAll(src, dst[:0])
	if err != nil {
		return make([]byte, len(dst)+1)
	}
	return out
}

func (c *cachedZstd) decoder() *zstd.Decoder {
	c.decOnce.Do(func() {
		// Parquet pages are at most 2 GiB (their sizes are int32).
		c.dec, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(1<<31))
	})
	return c.dec
}

// Arrow's codec table is a plain map read without locks by every Parquet
// reader and writer, so the only race-free moment to replace an entry is
// package initialisation, before any goroutine can use it.
func init() {
	if orig, err := compress.GetCodec(compress.Codecs.Zstd); err == nil {
		compress.RegisterCodec(compress.Codecs.Zstd, &cachedZstd{Codec: orig, encs: map[int]*zstd.Encoder{}})
	}
}
