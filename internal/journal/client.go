package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client reads a journal served on Path, e.g. on the loopback debug address.
type Client struct {
	// BaseURL is where Path is served: "http://127.0.0.1:10256". Required.
	BaseURL string
	// HTTP defaults to a client whose timeout covers the longest wait.
	HTTP *http.Client
}

// Read asks for the events after since that match f. With wait > 0 (at most MaxWait) the server
// holds the request until one matches (a long poll). It may block for wait plus the network.
func (c Client) Read(ctx context.Context, since uint64, f Filter, wait time.Duration) (Page, error) {
	q := url.Values{"since": {strconv.FormatUint(since, 10)}}
	if f.Pod != "" {
		q.Set("pod", f.Pod)
	}
	if f.Source != "" {
		q.Set("source", f.Source)
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	u := strings.TrimSuffix(c.BaseURL, "/") + Path + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, err
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = &http.Client{Timeout: MaxWait + 30*time.Second}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return Page{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Page{}, fmt.Errorf("read %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Page{}, fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	var p Page
	if err := json.Unmarshal(body, &p); err != nil {
		return Page{}, fmt.Errorf("GET %s: not a journal page: %w", u, err)
	}
	return p, nil
}
