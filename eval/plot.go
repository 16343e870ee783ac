package eval

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Size of the plot WritePlot draws.
const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 10 * vg.Centimeter
)

// accuracyTicks marks accuracy from 0 to 1 by tenths, labelled by fifths.
var accuracyTicks = plot.ConstantTicks(func() []plot.Tick {
	var ts []plot.Tick
	for i := 0; i <= 10; i++ {
		t := plot.Tick{Value: float64(i) / 10}
		if i%2 == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', 1, 64)
		}
		ts = append(ts, t)
	}
	return ts
}())

// errNoCurve is WritePlot's error for a report without a curve.
var errNoCurve = errors.New("no token budget has scored results to plot")

// WritePlot draws the report's accuracy-against-budget curves as a PNG
// image: accuracy against token budget with its 95% interval as error
// bars, a line per data source that has a curve, named in the legend. A
// report with no curve is an error.
func (r *Report) WritePlot(w io.Writer) error {
	p, err := r.curvePlot()
	if err != nil {
		return err
	}
	c := vgimg.PngCanvas{Canvas: vgimg.New(plotWidth, plotHeight)}
	p.Draw(draw.New(c))
	_, err = c.WriteTo(w)
	return err
}

// curvePoints are a curve's points and the lengths of their error bars
// below and above each point: the 95% interval around the accuracy.
func curvePoints(pts []CurvePoint) (plotter.XYs, plotter.YErrors) {
	xys := make(plotter.XYs, len(pts))
	errs := make(plotter.YErrors, len(pts))
	for i, pt := range pts {
		a := pt.Accuracy
		xys[i] = plotter.XY{X: pt.Budget, Y: a.Mean}
		errs[i] = struct{ Low, High float64 }{a.Mean - a.CI95[0], a.CI95[1] - a.Mean}
	}
	return xys, errs
}

// curvePlot lays the report's curves out for WritePlot.
func (r *Report) curvePlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Accuracy against token budget"
	p.X.Label.Text = "token budget (tokens)"
	p.Y.Label.Text = "accuracy (95% interval)"
	p.Y.Tick.Marker = accuracyTicks
	p.Legend.Top, p.Legend.Left = true, true
	p.Add(plotter.NewGrid())
	drawn, most := 0, 0.0
	for _, name := range sortedKeys(r.DataSources) {
		pts := r.DataSources[name].Curve
		if len(pts) == 0 {
			continue
		}
		xys, errs := curvePoints(pts)
		line, marks, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		bars, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xys, errs})
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", name, err)
		}
		color := plotutil.Color(drawn)
		line.Color, line.Dashes = color, plotutil.Dashes(drawn)
		marks.Color, marks.Shape = color, plotutil.Shape(drawn)
		bars.Color = color
		p.Add(line, marks, bars)
		p.Legend.Add(name, line, marks)
		most = max(most, pts[len(pts)-1].Budget)
		drawn++
	}
	if drawn == 0 {
		return nil, errNoCurve
	}
	// From no budget, with room for the last error bar's caps; accuracy
	// from 0 to 1, with room above it for the legend, a line a source.
	p.X.Min, p.X.Max = 0, most*1.05
	p.Y.Min, p.Y.Max = 0, 1+0.07*float64(drawn+1)
	return p, nil
}
