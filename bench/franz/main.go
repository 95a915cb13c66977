// Command franz times franz-go's sticky balancer through its public API (kgo.StickyBalancer),
// unmodified, on a group read as JSON from stdin, and writes the times and the plan as JSON.
//
// Input:  {"topics": {"t0": 3}, "members": [{"id": "c0", "topics": ["t0"],
//
//	"owned": [["t0", 0]], "generation": 1}], "repeat": 25, "warmup": 3}
//
// Output: {"seconds": [...], "plan": {"c0": {"t0": [0]}}}
//
// Each member's JoinGroup metadata is written by the balancer itself (JoinGroupMetadata) and
// parsed by it (MemberBalancer) before the clock starts; what is timed is the balancing call
// (BalanceOrError, which a franz-go leader calls), the leader's planning.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type member struct {
	ID         string               `json:"id"`
	Topics     []string             `json:"topics"`
	Owned      [][2]json.RawMessage `json:"owned"`
	Generation int32                `json:"generation"`
}

type input struct {
	Topics  map[string]int32 `json:"topics"`
	Members []member         `json:"members"`
	Repeat  int              `json:"repeat"`
	Warmup  int              `json:"warmup"`
}

type output struct {
	Seconds []float64                     `json:"seconds"`
	Plan    map[string]map[string][]int32 `json:"plan"`
}

func owned(m member) (map[string][]int32, error) {
	out := map[string][]int32{}
	for _, pair := range m.Owned {
		var topic string
		var partition int32
		if err := json.Unmarshal(pair[0], &topic); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(pair[1], &partition); err != nil {
			return nil, err
		}
		out[topic] = append(out[topic], partition)
	}
	return out, nil
}

func run() error {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return fmt.Errorf("reading the group: %w", err)
	}
	balancer := kgo.StickyBalancer()
	joined := make([]kmsg.JoinGroupResponseMember, 0, len(in.Members))
	for _, m := range in.Members {
		current, err := owned(m)
		if err != nil {
			return fmt.Errorf("member %s: %w", m.ID, err)
		}
		joined = append(joined, kmsg.JoinGroupResponseMember{
			MemberID:         m.ID,
			ProtocolMetadata: balancer.JoinGroupMetadata(m.Topics, current, m.Generation),
		})
	}
	var out output
	for i := 0; i < in.Warmup+in.Repeat; i++ {
		planner, _, err := balancer.MemberBalancer(joined)
		if err != nil {
			return err
		}
		start := time.Now()
		plan, err := planner.(kgo.GroupMemberBalancerOrError).BalanceOrError(in.Topics)
		elapsed := time.Since(start).Seconds()
		if err != nil {
			return err
		}
		if i >= in.Warmup {
			out.Seconds = append(out.Seconds, elapsed)
		}
		out.Plan = plan.(*kgo.BalancePlan).AsMemberIDMap()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "franz:", err)
		os.Exit(1)
	}
}
