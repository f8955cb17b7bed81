import { Component, type ReactNode } from 'react';

/** A page that throws while rendering shows the error instead of a blank screen. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error?: Error }> {
  override state: { error?: Error } = {};

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <div className="error" role="alert">
        <div>
          <strong>This page failed: </strong>
          {this.state.error.message}
          <div>
            <button type="button" onClick={() => location.reload()}>
              Reload the page
            </button>
          </div>
        </div>
      </div>
    );
  }
}
