package flightsql

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"
	fsql "github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// sqlTypePrefix starts the type URL of every Flight SQL command and
// ticket (a google.protobuf.Any).
const sqlTypePrefix = "type.googleapis.com/arrow.flight.protocol.sql."

// IsCommand reports whether b, a descriptor's command or a ticket, is a
// Flight SQL message: a google.protobuf.Any of a Flight SQL type. scand's
// own commands (a ScanRequest as protobuf or JSON) and tickets (a signed
// envelope) are not.
func IsCommand(b []byte) bool {
	if len(b) == 0 || b[0] != 0x0a { // field 1 (type_url), length-delimited
		return false
	}
	var a anypb.Any
	if err := proto.Unmarshal(b, &a); err != nil {
		return false
	}
	return strings.HasPrefix(a.GetTypeUrl(), sqlTypePrefix)
}

// sqlActions are the action types the front door serves.
var sqlActions = map[string]bool{
	fsql.CreatePreparedStatementActionType:     true,
	fsql.ClosePreparedStatementActionType:      true,
	fsql.CreatePreparedSubstraitPlanActionType: true,
	fsql.CancelQueryActionType:                 true,
	fsql.BeginSavepointActionType:              true,
	fsql.BeginTransactionActionType:            true,
	fsql.EndTransactionActionType:              true,
	fsql.EndSavepointActionType:                true,
	flight.CancelFlightInfoActionType:          true,
	flight.RenewFlightEndpointActionType:       true,
	flight.SetSessionOptionsActionType:         true,
	flight.GetSessionOptionsActionType:         true,
	flight.CloseSessionActionType:              true,
}

// IsAction reports whether an action type is one of Flight SQL's.
func IsAction(actionType string) bool { return sqlActions[actionType] }

// Mux serves scand's own Flight calls and Flight SQL's on one service:
// a descriptor or ticket holding a Flight SQL command, a Flight SQL
// action and DoPut go to sql; everything else (scand's requests and
// tickets, Handshake, ListFlights, scand's actions) to scand. Statements'
// endpoints carry scand's tickets, so their DoGet goes to scand too.
type Mux struct {
	flight.BaseFlightServer
	Scand flight.FlightServer
	SQL   flight.FlightServer
}

// Handshake implements flight.FlightServer.
func (m *Mux) Handshake(stream flight.FlightService_HandshakeServer) error {
	return m.Scand.Handshake(stream)
}

// ListFlights implements flight.FlightServer.
func (m *Mux) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	return m.Scand.ListFlights(c, stream)
}

// GetFlightInfo implements flight.FlightServer.
func (m *Mux) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if d.GetType() == flight.DescriptorCMD && IsCommand(d.GetCmd()) {
		return m.SQL.GetFlightInfo(ctx, d)
	}
	return m.Scand.GetFlightInfo(ctx, d)
}

// PollFlightInfo implements flight.FlightServer.
func (m *Mux) PollFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.PollInfo, error) {
	if d.GetType() == flight.DescriptorCMD && IsCommand(d.GetCmd()) {
		return m.SQL.PollFlightInfo(ctx, d)
	}
	return m.Scand.PollFlightInfo(ctx, d)
}

// GetSchema implements flight.FlightServer.
func (m *Mux) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	if d.GetType() == flight.DescriptorCMD && IsCommand(d.GetCmd()) {
		return m.SQL.GetSchema(ctx, d)
	}
	return m.Scand.GetSchema(ctx, d)
}

// DoGet implements flight.FlightServer.
func (m *Mux) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	if IsCommand(t.GetTicket()) {
		return m.SQL.DoGet(t, stream)
	}
	return m.Scand.DoGet(t, stream)
}

// DoPut implements flight.FlightServer: only Flight SQL writes (binding
// parameters), which the front door refuses.
func (m *Mux) DoPut(stream flight.FlightService_DoPutServer) error {
	return m.SQL.DoPut(stream)
}

// DoExchange implements flight.FlightServer.
func (m *Mux) DoExchange(stream flight.FlightService_DoExchangeServer) error {
	return m.Scand.DoExchange(stream)
}

// DoAction implements flight.FlightServer.
func (m *Mux) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	if IsAction(a.GetType()) {
		return m.SQL.DoAction(a, stream)
	}
	return m.Scand.DoAction(a, stream)
}

// ListActions implements flight.FlightServer: scand's actions, then
// Flight SQL's.
func (m *Mux) ListActions(e *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	if err := m.Scand.ListActions(e, stream); err != nil {
		return err
	}
	return m.SQL.ListActions(e, stream)
}
