package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/conversation"
)

// v1Dir holds the TicToc v1 release files, relative to this package.
const v1Dir = "../../../shared/data/tictoc-v1"

var v1Files = []string{
	"preferNoTool_elapse_0.json",
	"preferNoTool_elapse_1.json",
	"preferTool_elapse_0.json",
	"preferTool_elapse_1.json",
	"preferTool_elapse_2.json",
}

// paperTest is the test split of the TicToc paper, App. D.1.
var paperTest = map[string][]string{
	SensitivityLow: {
		"Airline Baggage Policy",
		"Astronomical Object Info",
		"Chemical Safety Data Sheet (SDS)",
		"City Population Data",
		"Office Finder",
		"Patent Metadata Lookup",
		"Public Health Screening Guidelines",
		"Streaming Service Library Checker",
	},
	SensitivityMedium: {
		"Airport Security Line Wait Time",
		"Hiking Trail Condition Report",
		"Hotel Room Availability & Rates",
		"Job Board Live Listings",
		"Movie Showtimes Finder",
		"Tide Height Tracker",
	},
	SensitivityHigh: {
		"Cloud Server Load Balancer",
		"Emergency Alert / 911 Dispatch Interface",
		"ICU Vitals Monitor",
		"Live Auction Price Retrieval",
		"Live Sports Score Tracker",
		"Live Vehicle GPS Tracker",
		"Live Weather Sensor Data",
		"Restaurant Wait Time Checker",
		"Ride-Hailing Dispatch",
		"Stock Market Order Book",
		"Train Delay Tracker",
		"Urban Parking-Spot Reservation",
	},
}

// v1Scenarios maps each scenario with data in TicToc v1 to its id prefixes.
var v1Scenarios = map[string][]string{
	"Regulatory Information Service":     {"Regulatory_Information_Service", "regulatoryinfoserviceexample"},
	"University Degree Requirements":     {"University_Degree_Requirements", "universitydegreeexample"},
	"Public Health Screening Guidelines": {"Public_Health_Screening_Guidelines", "publichealthscreeningexample"},
	"Airline Baggage Policy":             {"Airline_Baggage_Policy", "airlinebaggagepolicyexample"},
	"Bank Interest Rate Checker":         {"Published_Bank_Interest_Rate_Checker", "bankapy_example"},
	"Recorded Property Deed Lookup":      {"recorded_property_deed_lookup"},
	"Astronomical Object Info":           {"astronomical_object_info"},
	"Job Board Live Listings":            {"job_board_listing"},
	"Weather Forecast Service":           {"weatherforecast"},
	"Package / Shipment Tracker":         {"delivery_tracking"},
	"Laundry Service Order Status":       {"laundry_service_order_status"},
	"In-Game Marketplace Price Checker":  {"in_game_item_price_tracker"},
	"Airport Security Line Wait Time":    {"airport_security_line_wait_time"},
	"Tide Height Tracker":                {"tide_height"},
	"Pollution Emission Monitor":         {"pollution_emission"},
	"Hotel Room Availability & Rates":    {"hotel_incontextavail", "hotel_rep_fail", "hotel_requestrepeat", "hotel_usrconfirm"},
	"Tee Time Booker":                    variants("Tee_Time_Booker"),
	"Prescription Fulfillment & Hold":    variants("Pharmacy_Medicine_Fulfillment_&_Hold"),
	"Flight Search & Booking":            {"flight_incontextavail", "flight_rep_fail", "flight_requestrepeat", "flight_usrconfirm"},
	"Live Sports Betting Odds Retrieval": {"live_sports_betting"},
	"Live Auction Price Retrieval":       {"live_auction_price"},
	"E-commerce Product Stock Checker":   {"e-commerce_product_price_and_availability"},
	"Live Traffic Navigation & ETA":      {"live_traffic_navigation_and_eta_updates"},
	"Live Sports Score Tracker":          {"live_sports_score_tracker"},
	"Live Vehicle GPS Tracker":           {"live_vehicle_gps_tracker"},
	"Live Weather Sensor Data":           {"live_weather_sensor_data"},
	"Train Delay Tracker":                {"train_delay"},
	"Restaurant Wait Time Checker":       {"restaurant_wait_time"},
	"Stock Market Order Book":            {"stock_market_order_book"},
	"Cryptocurrency Exchange Retrieval":  {"cryptocurrency_exchange"},
	"Cloud Server Load Balancer":         variants("cloud_server_load_balancer"),
	"ICU Vitals Monitor":                 variants("live_medical_device_monitor"),
	"Power Grid Control System":          variants("power_grid_operational_control"),
	"Stock Trading (Order Submission)":   {"stock_trading"},
}

func variants(base string) []string {
	return []string{
		base + "_in_context_cnt", base + "_rep_after_failure",
		base + "_request_repeat", base + "_usr_confirm",
	}
}

func defaultCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := Default()
	require.NoError(t, err)
	return c
}

func TestDefaultCounts(t *testing.T) {
	c := defaultCatalog(t)
	assert.Len(t, c.Scenarios(), 76)
	assert.Equal(t, map[string]int{"low": 29, "medium": 25, "high": 22}, c.Counts())

	split := map[string]map[string]int{PaperTrain: {}, PaperTest: {}}
	readWrite := map[string]int{}
	testNames := map[string][]string{}
	for _, s := range c.Scenarios() {
		split[s.PaperSplit][s.Sensitivity]++
		if s.IO == IOReadWrite {
			readWrite[s.Sensitivity]++
		}
		if s.PaperSplit == PaperTest {
			testNames[s.Sensitivity] = append(testNames[s.Sensitivity], s.Name)
		}
		assert.NotEmpty(t, s.Description, s.Name)
	}
	assert.Equal(t, map[string]int{"low": 8, "medium": 6, "high": 12}, split[PaperTest], "paper test split")
	assert.Equal(t, map[string]int{"low": 21, "medium": 19, "high": 10}, split[PaperTrain], "paper train split")

	for level, want := range paperTest {
		got := testNames[level]
		sort.Strings(got)
		want = append([]string(nil), want...)
		sort.Strings(want)
		assert.Equal(t, want, got, "paper test scenarios, %s sensitivity", level)
	}

	// Table 6: every low scenario is R; medium has 7 R&W (hotel, tee time,
	// prescription, flight, clinic, haircut, rental car); high has 11 R&W
	// (load balancer through stock trading).
	assert.Equal(t, map[string]int{"medium": 7, "high": 11}, readWrite, "read_write scenarios")
	for _, name := range []string{
		"Hotel Room Availability & Rates", "Rental Car Availability & Rate Quote",
		"Cloud Server Load Balancer", "Stock Trading (Order Submission)", "Concert Ticket",
	} {
		s, ok := c.ByName(name)
		require.True(t, ok, name)
		assert.Equal(t, IOReadWrite, s.IO, name)
	}
	for _, name := range []string{"Live Auction Price Retrieval", "Subscription / Account Status", "Airline Baggage Policy"} {
		s, ok := c.ByName(name)
		require.True(t, ok, name)
		assert.Equal(t, IOReadOnly, s.IO, name)
	}
}

func TestDefaultOrderAndLookup(t *testing.T) {
	c := defaultCatalog(t)
	all := c.Scenarios()
	assert.Equal(t, "Regulatory Information Service", all[0].Name)
	assert.Equal(t, "Stock Trading (Order Submission)", all[len(all)-1].Name)

	// Scenarios returns a copy of the slice.
	all[0] = nil
	assert.NotNil(t, c.Scenarios()[0])

	s, ok := c.ByName("Tee Time Booker")
	require.True(t, ok)
	assert.Equal(t, SensitivityMedium, s.Sensitivity)
	assert.Equal(t, PaperTrain, s.PaperSplit)
	_, ok = c.ByName("tee time booker")
	assert.False(t, ok, "ByName is exact")

	// Scenarios without v1 data carry one snake_case alias; names also resolve.
	s, err := c.Resolve("company_policy_lookup_4")
	require.NoError(t, err)
	assert.Equal(t, "Company Policy Lookup", s.Name)
	s, err = c.Resolve("Company Policy Lookup")
	require.NoError(t, err)
	assert.Equal(t, "Company Policy Lookup", s.Name)
	s, err = c.Resolve("emergency_alert_911_dispatch_interface_0")
	require.NoError(t, err)
	assert.Equal(t, "Emergency Alert / 911 Dispatch Interface", s.Name)
}

type v1Record struct {
	ID string `json:"id"`
}

func readV1IDs(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(v1Dir); errors.Is(err, os.ErrNotExist) {
		t.Skipf("TicToc v1 data not found at %s", v1Dir)
	}
	var ids []string
	for _, f := range v1Files {
		data, err := os.ReadFile(filepath.Join(v1Dir, f))
		require.NoError(t, err)
		var recs []v1Record
		require.NoError(t, json.Unmarshal(data, &recs), f)
		require.NotEmpty(t, recs, f)
		for i, r := range recs {
			require.NotEmpty(t, r.ID, "%s record %d has no id", f, i)
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func TestV1IDsResolve(t *testing.T) {
	c := defaultCatalog(t)
	ids := readV1IDs(t)

	got := map[string]map[string]bool{} // scenario name -> prefixes seen
	prefixes := map[string]bool{}
	for _, id := range ids {
		s, err := c.Resolve(id)
		if !assert.NoError(t, err) {
			continue
		}
		p := AliasOf(id)
		prefixes[p] = true
		if got[s.Name] == nil {
			got[s.Name] = map[string]bool{}
		}
		got[s.Name][p] = true
	}
	assert.Len(t, prefixes, 60)

	want := map[string]map[string]bool{}
	for name, ps := range v1Scenarios {
		want[name] = map[string]bool{}
		for _, p := range ps {
			want[name][p] = true
		}
	}
	assert.Equal(t, want, got, "v1 prefixes by scenario")

	// Every scenario with v1 data lists exactly its v1 prefixes as aliases;
	// every other one has a single alias.
	for _, s := range c.Scenarios() {
		if ps, ok := v1Scenarios[s.Name]; ok {
			assert.ElementsMatch(t, ps, s.Aliases, s.Name)
		} else {
			assert.Len(t, s.Aliases, 1, s.Name)
		}
	}

	for id, name := range map[string]string{
		"cloud_server_load_balancer_rep_after_failure_7":        "Cloud Server Load Balancer",
		"live_medical_device_monitor_usr_confirm_2":             "ICU Vitals Monitor",
		"delivery_tracking_5":                                   "Package / Shipment Tracker",
		"Pharmacy_Medicine_Fulfillment_&_Hold_request_repeat_1": "Prescription Fulfillment & Hold",
		"bankapy_example_0":                                     "Bank Interest Rate Checker",
		"e-commerce_product_price_and_availability_12":          "E-commerce Product Stock Checker",
		"hotel_rep_fail_3":                                      "Hotel Room Availability & Rates",
		"power_grid_operational_control_in_context_cnt_19":      "Power Grid Control System",
		"in_game_item_price_tracker_40":                         "In-Game Marketplace Price Checker",
		"Tee_Time_Booker_usr_confirm_1":                         "Tee Time Booker",
		"weatherforecast_9":                                     "Weather Forecast Service",
		"live_traffic_navigation_and_eta_updates_2":             "Live Traffic Navigation & ETA",
		"live_medical_device_monitor_in_context_cnt_29":         "ICU Vitals Monitor",
		"live_sports_betting_1":                                 "Live Sports Betting Odds Retrieval",
		"stock_trading_0":                                       "Stock Trading (Order Submission)",
		"Published_Bank_Interest_Rate_Checker_26":               "Bank Interest Rate Checker",
		"cloud_server_load_balancer_usr_confirm_0":              "Cloud Server Load Balancer",
		"job_board_listing_11":                                  "Job Board Live Listings",
		"tide_height_3":                                         "Tide Height Tracker",
		"restaurant_wait_time_37":                               "Restaurant Wait Time Checker",
		"cryptocurrency_exchange_5":                             "Cryptocurrency Exchange Retrieval",
		"power_grid_operational_control_rep_after_failure_1":    "Power Grid Control System",
		"Pharmacy_Medicine_Fulfillment_&_Hold_in_context_cnt_0": "Prescription Fulfillment & Hold",
		"airlinebaggagepolicyexample_2":                         "Airline Baggage Policy",
		"flight_usrconfirm_14":                                  "Flight Search & Booking",
		"pollution_emission_0":                                  "Pollution Emission Monitor",
		"laundry_service_order_status_71":                       "Laundry Service Order Status",
		"live_vehicle_gps_tracker_8":                            "Live Vehicle GPS Tracker",
		"recorded_property_deed_lookup_13":                      "Recorded Property Deed Lookup",
		"University_Degree_Requirements_0":                      "University Degree Requirements",
	} {
		s, err := c.Resolve(id)
		if assert.NoError(t, err, id) {
			assert.Equal(t, name, s.Name, id)
		}
	}
}

func TestResolveUnknown(t *testing.T) {
	c := defaultCatalog(t)
	_, err := c.Resolve("foo_bar_3")
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrUnknown))
	assert.EqualError(t, err, `scenario: id "foo_bar_3": unknown scenario alias "foo_bar" (add it to the catalog's aliases)`)

	_, err = c.Resolve("nosuffix")
	assert.ErrorIs(t, err, ErrUnknown)
	assert.EqualError(t, err, `scenario: id "nosuffix": unknown scenario alias "nosuffix" (add it to the catalog's aliases)`)

	// Prefix matching is exact: no case folding, no partial aliases.
	for _, id := range []string{"DELIVERY_TRACKING_5", "delivery_5", "hotel_0", "", "cloud_server_load_balancer_7"} {
		_, err := c.Resolve(id)
		assert.ErrorIs(t, err, ErrUnknown, "%q", id)
	}
}

func TestAliasOf(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"delivery_tracking_5", "delivery_tracking"},
		{"cloud_server_load_balancer_rep_after_failure_7", "cloud_server_load_balancer_rep_after_failure"},
		{"Pharmacy_Medicine_Fulfillment_&_Hold_usr_confirm_12", "Pharmacy_Medicine_Fulfillment_&_Hold_usr_confirm"},
		{"e-commerce_product_price_and_availability_0", "e-commerce_product_price_and_availability"},
		{"stock_trading_041", "stock_trading"},
		{"a_1_2", "a_1"}, // only the last suffix
		{"weatherforecast", "weatherforecast"},
		{"weatherforecast5", "weatherforecast5"},
		{"train_delay_", "train_delay_"},
		{"train_delay_x1", "train_delay_x1"},
		{"_3", "_3"},
		{"3", "3"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, AliasOf(tc.id), "AliasOf(%q)", tc.id)
	}
}

// entry renders one scenario entry with the given field lines replaced.
func entry(name string, override map[string]string) string {
	fields := [][2]string{
		{"name", name},
		{"sensitivity", "low"},
		{"io", "read_only"},
		{"paper_split", "train"},
		{"description", "something"},
		{"aliases", "[" + strings.ToLower(strings.ReplaceAll(name, " ", "_")) + "]"},
	}
	var b strings.Builder
	for i, f := range fields {
		v, ok := override[f[0]]
		if ok && v == "-" {
			continue
		}
		if ok {
			f[1] = v
		}
		prefix := "    "
		if i == 0 {
			prefix = "  - "
		}
		fmt.Fprintf(&b, "%s%s: %s\n", prefix, f[0], f[1])
	}
	return b.String()
}

func TestLoadValid(t *testing.T) {
	doc := "scenarios:\n" + entry("Alpha", nil) +
		entry("Beta", map[string]string{"sensitivity": "high", "io": "read_write", "paper_split": "test",
			"aliases": "[Beta, beta_x, beta_y]", "description": "-"})
	c, err := Load(strings.NewReader(doc), "t.yaml")
	require.NoError(t, err)
	require.Len(t, c.Scenarios(), 2)
	assert.Equal(t, map[string]int{"low": 1, "medium": 0, "high": 1}, c.Counts())
	b, ok := c.ByName("Beta")
	require.True(t, ok)
	assert.Equal(t, &Scenario{Name: "Beta", Sensitivity: "high", IO: "read_write", PaperSplit: "test",
		Aliases: []string{"Beta", "beta_x", "beta_y"}}, b)
	s, err := c.Resolve("beta_y_3")
	require.NoError(t, err)
	assert.Same(t, b, s)
}

func TestLoadErrors(t *testing.T) {
	ok := entry("Alpha", nil)
	for _, tc := range []struct {
		name string
		doc  string
		want []string // substrings of the error
	}{
		{"bad yaml", "scenarios:\n  - name: [unclosed\n", []string{"t.yaml: ", "yaml: line"}},
		{"empty file", "", []string{"t.yaml: ", "empty catalog"}},
		{"no scenarios", "scenarios: []\n", []string{"t.yaml:1: ", `"scenarios" is empty`}},
		{"unknown top-level field", "version: 2\nscenarios:\n" + ok, []string{"t.yaml:1: ", `unknown top-level field "version"`}},
		{"scenarios not a list", "scenarios: {}\n", []string{"t.yaml:1: ", `"scenarios" must be a list`}},
		{"two documents", "scenarios:\n" + ok + "---\nscenarios: []\n", []string{"t.yaml:8: ", "more than one YAML document"}},
		{"unknown field", "scenarios:\n" + ok + entry("Beta", nil) + "    sensitivty: low\n",
			[]string{"t.yaml:14: ", "scenario 2 (Beta)", `unknown field "sensitivty"`}},
		{"repeated field", "scenarios:\n" + entry("Alpha", nil) + "    io: read_write\n",
			[]string{"t.yaml:8: ", "scenario 1 (Alpha)", `field "io" given twice (first on line 4)`}},
		{"scenario not a mapping", "scenarios:\n" + ok + "  - just a string\n",
			[]string{"t.yaml:8: ", "scenario 2: want a mapping"}},
		{"wrong type", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "alpha"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", `line 7: want a list, got "alpha"`}},
		{"a mapping for a list", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "{a: 1}"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "line 7: want a list, got a mapping"}},
		{"a list for a string", "scenarios:\n" + entry("Alpha", map[string]string{"io": "[read_only]"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "want a string, got a list"}},
		{"missing name", "scenarios:\n" + ok + entry("", map[string]string{"aliases": "[x]"}),
			[]string{"t.yaml:8: ", "scenario 2: name is missing"}},
		{"duplicate name", "scenarios:\n" + ok + entry("Alpha", map[string]string{"aliases": "[alpha2]"}),
			[]string{"t.yaml:8: ", "scenario 2 (Alpha)", `name "Alpha" already used by scenario 1 (Alpha)`}},
		{"duplicate alias across scenarios", "scenarios:\n" + ok + entry("Beta", map[string]string{"aliases": "[beta, alpha]"}),
			[]string{"t.yaml:8: ", "scenario 2 (Beta)", `alias "alpha" already belongs to scenario 1 (Alpha)`}},
		{"alias repeated in one scenario", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "[a, a]"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", `alias "a" listed twice`}},
		{"alias is another scenario's name", "scenarios:\n" + ok + entry("Beta", map[string]string{"aliases": "[Alpha]"}),
			[]string{"t.yaml:8: ", "scenario 2 (Beta)", `alias "Alpha" is the name of scenario 1 (Alpha)`}},
		{"bad sensitivity", "scenarios:\n" + ok + entry("Tee Time Booker", map[string]string{"sensitivity": "urgent"}),
			[]string{"t.yaml:8: ", `scenario 2 (Tee Time Booker): sensitivity "urgent" is not low, medium or high`}},
		{"missing sensitivity", "scenarios:\n" + entry("Alpha", map[string]string{"sensitivity": "-"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "sensitivity is missing"}},
		{"bad io", "scenarios:\n" + entry("Alpha", map[string]string{"io": "R&W"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", `io "R&W" is not read_only or read_write`}},
		{"bad paper_split", "scenarios:\n" + entry("Alpha", map[string]string{"paper_split": "validation"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", `paper_split "validation" is not train or test`}},
		{"no aliases", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "[]"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "aliases is empty"}},
		{"aliases missing", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "-"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "aliases is empty"}},
		{"empty alias", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": `[a, ""]`}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", "aliases has an empty entry"}},
		{"scenario repeated by a YAML alias", "scenarios:\n  - &a {name: Alpha, sensitivity: low, io: read_only, paper_split: train, aliases: [alpha]}\n  - *a\n",
			[]string{"t.yaml:2: ", "scenario 2 (Alpha)", `name "Alpha" already used by scenario 1 (Alpha)`}},
		{"alias with numeric suffix", "scenarios:\n" + entry("Alpha", map[string]string{"aliases": "[alpha_2]"}),
			[]string{"t.yaml:2: ", "scenario 1 (Alpha)", `aliases entry "alpha_2" ends in _<digits>`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(strings.NewReader(tc.doc), "t.yaml")
			require.Error(t, err, "document:\n%s", tc.doc)
			assert.Nil(t, c)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.True(t, strings.HasPrefix(err.Error(), "t.yaml"), err.Error())
		})
	}
}

func TestLoadReadError(t *testing.T) {
	_, err := Load(failingReader{}, "")
	assert.EqualError(t, err, "catalog: disk on fire")
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func ExampleCatalog_Resolve() {
	c, err := Default()
	if err != nil {
		panic(err)
	}
	s, err := c.Resolve("cloud_server_load_balancer_rep_after_failure_7")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Sensitivity, s.IO, s.PaperSplit)

	_, err = c.Resolve("foo_bar_3")
	fmt.Println(errors.Is(err, ErrUnknown))
	fmt.Println(err)
	// Output:
	// Cloud Server Load Balancer high read_write test
	// true
	// scenario: id "foo_bar_3": unknown scenario alias "foo_bar" (add it to the catalog's aliases)
}

func TestCatalogScenarioOf(t *testing.T) {
	doc := "scenarios:\n" + entry("Tide Tracker", map[string]string{"sensitivity": "medium", "aliases": "[tide, tides]"}) +
		entry("Flight Status", map[string]string{"sensitivity": "high", "aliases": "[flight_status]"})
	c, err := Load(strings.NewReader(doc), "t.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, id, scenario, sensitivity string
		want, wantSensitivity, err      string
	}{
		{name: "the id's alias", id: "tide_3", want: "Tide Tracker", wantSensitivity: "medium"},
		{name: "the field by its name", id: "x_1", scenario: "Flight Status", want: "Flight Status", wantSensitivity: "high"},
		{name: "the field by an alias", id: "x_1", scenario: "tides", want: "Tide Tracker", wantSensitivity: "medium"},
		{name: "the field agreeing with the id", id: "tides_0", scenario: "Tide Tracker", want: "Tide Tracker", wantSensitivity: "medium"},
		{name: "the record's sensitivity wins", id: "tide_3", sensitivity: "low", want: "Tide Tracker", wantSensitivity: "low"},
		{name: "an unknown field", id: "tide_3", scenario: "Tide Traker",
			err: `scenario "Tide Traker" is not in the scenario catalog (add it, or give --catalog)`},
		{name: "a field contradicting the id", id: "flight_status_2", scenario: "Tide Tracker",
			err: `scenario "Tide Tracker" contradicts the id, whose alias belongs to "Flight Status"`},
		{name: "an unknown id", id: "weather_1",
			err: `scenario: id "weather_1": unknown scenario alias "weather" (add it to the catalog's aliases)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, sens, err := c.ScenarioOf(&conversation.Trajectory{ID: tc.id, Scenario: tc.scenario, Sensitivity: tc.sensitivity})
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, name)
			assert.Equal(t, tc.wantSensitivity, sens)
		})
	}
}
